import Foundation
import Kafka
import TestSupport
import Testing

@Suite("Cluster questions: partitions, watermarks, groups")
struct KafkaClusterTests {
    @Test("a topic's partitions; an unknown topic is named", arguments: BrokerKind.allCases)
    func partitionsOfTopic(kind: BrokerKind) async throws {
        let broker = try await TestBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 3)
        let consumer = try KafkaConsumer(configuration: .test(broker, group: nil))
        #expect(try await consumer.partitions(of: topic) == [0, 1, 2])
        if kind == .mock {  // tansu's high watermark is wrong (brokers.md)
            try await produce(7, to: topic, on: broker, partition: 1)
            let w = try await consumer.watermarks(for: TopicPartition(topic: topic, partition: 1))
            #expect(w.low == 0 && w.high == 7)
        }
        await #expect(throws: KafkaError.self) { try await consumer.partitions(of: "no-such-topic-\(UUID().uuidString.prefix(6))") }
        await consumer.close()
    }

    /// A process that exits while a librdkafka call runs (its handle alive, its broker threads
    /// running through `exit`) crashed now and then: `replay` against a broker it could not trust
    /// died with SIGSEGV after printing its error. So a close ends the calls under way (they are
    /// made in slices) and returns only after they have.
    ///
    /// Also 9 s into the call, past the growing slices (250 ms to 4 s, 7.75 s in all): it goes on
    /// in slices of 8 s. It used to make one call of all the time left there, and a close waited
    /// out a 600 s question (a full run hung on this test, its close delayed past 3.75 s by a
    /// loaded machine).
    @Test(
        "close ends a call waiting on a cluster that never answers, and returns only once it has",
        .timeLimit(.minutes(1)), arguments: [0, 9])
    func closeEndsCallsUnderWay(closeAfterSeconds: Int) async throws {
        let port = try FreePort.next()  // nothing listens there
        var configuration = KafkaConsumerConfiguration(bootstrapServers: ["127.0.0.1:\(port)"])
        configuration.properties["log_level"] = "0"
        let consumer = try KafkaConsumer(configuration: configuration)
        let question = Task { try await consumer.partitions(of: "anything", timeout: .seconds(600)) }
        #expect(await eventually(timeout: .seconds(30)) { consumer.callsUnderWay == 1 })
        try await Task.sleep(for: .seconds(closeAfterSeconds))
        await consumer.close()
        #expect(consumer.callsUnderWay == 0)
        await #expect(throws: KafkaError.self) { try await question.value }
    }

    // The mock cluster does not implement ListGroups/DescribeGroups (UNSUPPORTED_FEATURE).
    @Test("a group is active while a member holds it, empty after it leaves", arguments: [BrokerKind.tansu])
    func describeGroup(kind: BrokerKind) async throws {
        let broker = try await TestBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 2)
        try await produce(20, to: topic, on: broker)
        let group = "g-\(UUID().uuidString.prefix(8))"
        let member = try KafkaConsumer(configuration: .test(broker, group: group))
        try member.subscribe(topics: [topic])
        let read = try await collect(20, from: member)
        try await member.commit(nextOffsets(after: read))

        let observer = try KafkaConsumer(configuration: .test(broker, group: nil))
        let active = try await observer.describeGroup(group)
        #expect(active.isActive)
        #expect(active.members.count == 1)
        await member.close()
        let gone = try await eventually(timeout: .seconds(20)) { try await !observer.describeGroup(group).isActive }
        #expect(gone)
        await observer.close()
    }
}
