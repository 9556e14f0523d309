import Foundation
import Kafka
import TestSupport
import Testing

@Suite("Consumer groups against real brokers")
struct KafkaConsumerGroupTests {
    @Test(
        "10k records: explicit commits, and a restarted consumer resumes exactly at the committed offsets",
        arguments: BrokerKind.allCases)
    func resumeFromCommittedOffsets(kind: BrokerKind) async throws {
        let broker = try await TestBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 4)
        let group = "g-\(UUID().uuidString.prefix(8))"
        try await produce(10_000, to: topic, on: broker)

        // First member: processes 6,000 records and commits exactly those.
        let first = try KafkaConsumer(configuration: .test(broker, group: group))
        try first.subscribe(topics: [topic])
        let processed = try await collect(6_000, from: first)
        #expect(processed.count == 6_000)
        let commits = nextOffsets(after: processed)
        try await first.commit(commits)
        let committed = try await first.committed(commits.map(\.topicPartition))
        #expect(committed.map(\.offset) == commits.map(\.offset))
        await first.close()

        // Second member of the same group: gets exactly the rest, each partition starting at
        // its committed offset; nothing lost, nothing read twice.
        let second = try KafkaConsumer(configuration: .test(broker, group: group))
        try second.subscribe(topics: [topic])
        let rest = try await collect(4_000, from: second)
        #expect(rest.count == 4_000)
        let committedByPartition = Dictionary(uniqueKeysWithValues: commits.map { ($0.partition, $0.offset.rawValue) })
        for partition in Set(rest.map(\.partition)) {
            let firstOffset = rest.filter { $0.partition == partition }.map(\.offset).min()!
            #expect(firstOffset == committedByPartition[partition] ?? 0, "partition \(partition)")
        }
        let values = (processed + rest).map { String(decoding: $0.value, as: UTF8.self) }
        #expect(Set(values).count == 10_000)
        #expect(Set(values) == Set((0..<10_000).map(String.init)))
        await second.close()
    }

    @Test("two members split the partitions; the survivor takes all when one leaves", arguments: BrokerKind.allCases)
    func splitAndTakeOver(kind: BrokerKind) async throws {
        let broker = try await TestBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 4)
        let group = "g-\(UUID().uuidString.prefix(8))"
        let revokedFromA = EventLog<[TopicPartition]>()
        let a = try KafkaConsumer(
            configuration: .test(broker, group: group),
            rebalanceHandler: .init(onRevoke: { revokedFromA.append($0) })
        )
        try a.subscribe(topics: [topic])
        #expect(await eventually { a.assignment.count == 4 })

        let b = try KafkaConsumer(configuration: .test(broker, group: group))
        try b.subscribe(topics: [topic])
        let split = await eventually {
            a.assignment.count + b.assignment.count == 4 && !a.assignment.isEmpty && !b.assignment.isEmpty
                && a.assignment.isDisjoint(with: b.assignment)
        }
        #expect(split, "a=\(a.assignment) b=\(b.assignment)")
        #expect(!revokedFromA.all.isEmpty, "A was asked to give partitions up through its revoke handler")

        // Both members get work: records of B's partitions reach B only.
        try await produce(400, to: topic, on: broker)
        let bMessages = try await collect(1, from: b)
        #expect(bMessages.allSatisfy { b.assignment.contains($0.topicPartition) })

        await b.close()
        #expect(await eventually { a.assignment.count == 4 }, "survivor has \(a.assignment)")
        await a.close()
    }

    @Test("the revoke handler runs before partitions are given up, and its commit counts", arguments: BrokerKind.allCases)
    func commitInRevokeHandler(kind: BrokerKind) async throws {
        let broker = try await TestBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 2)
        let group = "g-\(UUID().uuidString.prefix(8))"
        try await produce(100, to: topic, on: broker)

        let seen = EventLog<KafkaMessage>()
        let consumerBox = ConsumerBox()
        let happened = EventLog<String>()
        var configuration = KafkaConsumerConfiguration.test(broker, group: group)
        if kind == .mock {
            // A loaded full run once left this member's partitions uncommitted with the tests' 6 s
            // session (its heartbeats late, the member dropped, its partitions lost rather than
            // revoked, or the commit refused). Nothing here waits on the session; tansu's first
            // join takes half of it, so only the mock gets a longer one.
            configuration.sessionTimeout = .seconds(30)
        }
        let consumer = try KafkaConsumer(
            configuration: configuration,
            rebalanceHandler: .init(
                onRevoke: { partitions in
                    // Still the owner: commit what was processed.
                    let mine = seen.all.filter { partitions.contains($0.topicPartition) }
                    do {
                        try await consumerBox.consumer?.commit(nextOffsets(after: mine))
                        happened.append("revoked \(partitions.count), committed \(mine.count)")
                    } catch {
                        happened.append("revoked \(partitions.count), the commit failed: \(error)")
                    }
                },
                onLost: { happened.append("lost \($0.count)") })
        )
        consumerBox.consumer = consumer
        try consumer.subscribe(topics: [topic])
        for m in try await collect(100, from: consumer) { seen.append(m) }
        await consumer.close()  // leaves the group: revoke handler runs

        let reader = try KafkaConsumer(configuration: .test(broker, group: group))
        let committed = try await reader.committed([0, 1].map { TopicPartition(topic: topic, partition: $0) })
        #expect(committed.map(\.offset.rawValue).reduce(0, +) == 100, "\(happened.all)")
        await reader.close()
    }

    @Test("assign mode reads given partitions from given offsets without a group", arguments: BrokerKind.allCases)
    func assignMode(kind: BrokerKind) async throws {
        let broker = try await TestBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 1)
        try await produce(50, to: topic, on: broker, partition: 0)
        // Records are produced concurrently, so learn what each offset holds first.
        let whole = try KafkaConsumer(configuration: .test(broker, group: nil))
        try whole.assign([TopicPartitionOffset(TopicPartition(topic: topic, partition: 0), offset: .beginning)])
        let all = try await collect(50, from: whole)
        await whole.close()
        #expect(all.map(\.offset) == Array(0..<50))

        let consumer = try KafkaConsumer(configuration: .test(broker, group: nil))
        try consumer.assign([TopicPartitionOffset(topic: topic, partition: 0, offset: 20)])
        let messages = try await collect(30, from: consumer)
        #expect(messages.map(\.offset) == Array(20..<50))
        #expect(messages.map(\.value) == all.dropFirst(20).map(\.value))
        await consumer.close()
    }

    /// The pipeline pauses busy partitions, and one that was lost while paused stopped for good
    /// (found by the reliability suite: docs/reliability.md): librdkafka kept its pause across
    /// revocation and re-assignment. A pause now holds the partition's fetch queue, which
    /// librdkafka then leaves to the consumer to forward again when it is assigned back.
    @Test("a partition paused when it was revoked is fetched again once it is assigned back", arguments: BrokerKind.allCases)
    func pausedPartitionFetchesAfterReassignment(kind: BrokerKind) async throws {
        let broker = try await TestBroker.start(kind)
        let topic = try await broker.makeTopic(partitions: 2)
        let group = "g-\(UUID().uuidString.prefix(8))"
        var configuration = KafkaConsumerConfiguration.test(broker, group: group)
        configuration.assignmentStrategy = .range  // every rebalance revokes and re-assigns all
        let a = try KafkaConsumer(configuration: configuration)
        try a.subscribe(topics: [topic])
        #expect(await eventually { a.assignment.count == 2 })
        try await produce(10, to: topic, on: broker)
        let first = try await collect(10, from: a)
        #expect(first.count == 10)
        try await a.commit(nextOffsets(after: first))
        try a.pause(Array(a.assignment))

        // B joins and leaves: A's partitions are revoked, and all come back to A.
        let b = try KafkaConsumer(configuration: configuration)
        try b.subscribe(topics: [topic])
        #expect(await eventually { a.assignment.count == 1 && b.assignment.count == 1 }, "a=\(a.assignment) b=\(b.assignment)")
        await b.close()
        #expect(await eventually { a.assignment.count == 2 }, "a=\(a.assignment)")

        try await produce(20, to: topic, on: broker, from: 10)
        let after = try await collect(20, from: a, timeout: .seconds(30))
        #expect(after.count == 20, "records after the re-assignment: \(after.count) of 20")
        #expect(Set(after.map(\.partition)) == [0, 1])
        await a.close()
    }
}

/// Lets a rebalance handler reach the consumer it belongs to (set right after creation).
final class ConsumerBox: @unchecked Sendable {
    // Written once before the consumer subscribes; read only from its handlers afterwards.
    nonisolated(unsafe) var consumer: KafkaConsumer?
}
