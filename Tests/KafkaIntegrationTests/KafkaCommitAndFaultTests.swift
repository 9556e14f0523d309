import Foundation
import Kafka
import TestSupport
import Testing

@Suite("Commits, metadata and faults on the mock cluster")
struct KafkaCommitAndFaultTests {
    @Test("commit metadata round-trips")
    func metadataRoundTrip() async throws {
        let broker = try await TestBroker.start(.mock)
        let topic = try await broker.makeTopic(partitions: 1)
        try await produce(10, to: topic, on: broker)
        let consumer = try KafkaConsumer(configuration: .test(broker, group: "g-meta"))
        try consumer.subscribe(topics: [topic])
        let messages = try await collect(10, from: consumer)
        let metadata = "v1:done=12,15,18"
        try await consumer.commit(nextOffsets(after: messages.prefix(5), metadata: metadata))
        let committed = try await consumer.committed([TopicPartition(topic: topic, partition: 0)])
        #expect(committed.first?.offset == 5)
        #expect(committed.first?.metadata == metadata)
        await consumer.close()
    }

    @Test("injected commit errors are survived and the commit lands")
    func commitErrors() async throws {
        let broker = try await TestBroker.start(.mock)
        let topic = try await broker.makeTopic(partitions: 2)
        try await produce(200, to: topic, on: broker)
        let consumer = try KafkaConsumer(configuration: .test(broker, group: "g-commit-errors"))
        try consumer.subscribe(topics: [topic])
        let messages = try await collect(200, from: consumer)
        let offsets = nextOffsets(after: messages)

        broker.mock!.pushRequestErrors(.offsetCommit, [.requestTimedOut, .notCoordinator, .coordinatorNotAvailable])
        // librdkafka retries some of these itself; whatever surfaces must say it is retryable.
        // Losing the coordinator can also cost the member its place in the group (about one run
        // in five, with or without a load on the machine): the commit then fails with
        // UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION, which are not retryable as such, the offsets
        // being the old generation's. The only member gets its partitions back and commits then.
        let groupMoved: Set<KafkaError.Code> = [.unknownMemberID, .illegalGeneration, .rebalanceInProgress]
        var attempts = 0
        while true {
            attempts += 1
            do {
                try await consumer.commit(offsets)
                break
            } catch {
                #expect(error.isRetryable || groupMoved.contains(error.code), "\(error)")
                #expect(attempts < 20)
                if attempts >= 20 { throw error }
                if groupMoved.contains(error.code) {
                    #expect(await eventually { consumer.assignment.count == 2 }, "assigned again: \(consumer.assignment)")
                }
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        let committed = try await consumer.committed(offsets.map(\.topicPartition))
        #expect(committed.map(\.offset) == offsets.map(\.offset))
        await consumer.close()
    }

    @Test("all brokers down, then up: the consumer resumes fetching and commits")
    func brokersDownAndUp() async throws {
        let broker = try await TestBroker.start(.mock, brokers: 3)
        let topic = try await broker.makeTopic(partitions: 3)
        try await produce(300, to: topic, on: broker)
        let errors = EventLog<KafkaError>()
        let consumer = try KafkaConsumer(configuration: .test(broker, group: "g-down"), errorHandler: { errors.append($0) })
        try consumer.subscribe(topics: [topic])
        let before = try await collect(300, from: consumer)
        try await consumer.commit(nextOffsets(after: before))

        for id: Int32 in 1...3 { try broker.mock!.setBrokerDown(id) }
        #expect(await eventually(timeout: .seconds(30)) { !errors.all.isEmpty }, "the outage is reported")
        #expect(errors.all.allSatisfy { !$0.isFatal })
        for id: Int32 in 1...3 { try broker.mock!.setBrokerUp(id) }

        try await produce(300, to: topic, on: broker, from: 300)
        // A session that timed out during the outage means a rebalance, after which records
        // past the last commit may come again (at-least-once): every new record must come.
        let expected = Set((300..<600).map(String.init))
        let after = try await collect(from: consumer) { Set($0.map { String(decoding: $0.value, as: UTF8.self) }) == expected }
        #expect(Set(after.map { String(decoding: $0.value, as: UTF8.self) }) == expected)
        try await consumer.commit(nextOffsets(after: before + after))
        let committed = try await consumer.committed((0..<3).map { TopicPartition(topic: topic, partition: $0) })
        #expect(committed.map(\.offset.rawValue).reduce(0, +) == 600)
        await consumer.close()
    }

    @Test("the group coordinator moves: commits still land")
    func coordinatorMoves() async throws {
        let broker = try await TestBroker.start(.mock, brokers: 3)
        let topic = try await broker.makeTopic(partitions: 1)
        try await produce(20, to: topic, on: broker)
        let consumer = try KafkaConsumer(configuration: .test(broker, group: "g-coord"))
        try consumer.subscribe(topics: [topic])
        let messages = try await collect(20, from: consumer)
        try await consumer.commit(nextOffsets(after: messages.prefix(10)))
        try broker.mock!.setGroupCoordinator("g-coord", brokerID: 3)
        try broker.mock!.setGroupCoordinator("g-coord", brokerID: 2)
        let landed = await eventually(timeout: .seconds(30)) {
            (try? await consumer.commit(nextOffsets(after: messages))) != nil
        }
        #expect(landed)
        let committed = try await consumer.committed([TopicPartition(topic: topic, partition: 0)])
        #expect(committed.first?.offset == 20)
        await consumer.close()
    }

    @Test("pause stops delivery of a partition, resume restarts it")
    func pauseResume() async throws {
        let broker = try await TestBroker.start(.mock)
        let topic = try await broker.makeTopic(partitions: 1)
        let consumer = try KafkaConsumer(configuration: .test(broker, group: nil))
        let tp = TopicPartition(topic: topic, partition: 0)
        try consumer.assign([TopicPartitionOffset(tp, offset: .beginning)])
        try await produce(5, to: topic, on: broker, partition: 0)
        #expect(try await collect(5, from: consumer).count == 5)

        try consumer.pause([tp])
        try await produce(5, to: topic, on: broker, from: 5, partition: 0)
        let whilePaused = try await collect(1, from: consumer, timeout: .seconds(2))
        #expect(whilePaused.isEmpty, "nothing is delivered while paused")
        try consumer.resume([tp])
        let resumed = try await collect(5, from: consumer)
        #expect(resumed.map(\.offset) == Array(5..<10))
        await consumer.close()
    }

    @Test("watermarks and position follow what was produced and read")
    func watermarksAndPosition() async throws {
        let broker = try await TestBroker.start(.mock)
        let topic = try await broker.makeTopic(partitions: 1)
        try await produce(42, to: topic, on: broker, partition: 0)
        let consumer = try KafkaConsumer(configuration: .test(broker, group: nil))
        let tp = TopicPartition(topic: topic, partition: 0)
        let marks = try await consumer.watermarks(for: tp)
        #expect(marks.low == 0 && marks.high == 42)
        try consumer.assign([TopicPartitionOffset(tp, offset: .beginning)])
        _ = try await collect(42, from: consumer)
        #expect(try consumer.position([tp]).first?.offset == 42)
        try await consumer.seek([TopicPartitionOffset(tp, offset: 40)])
        #expect(try await collect(2, from: consumer).map(\.offset) == [40, 41])
        await consumer.close()
    }
}
