import Foundation
import Kafka
import Pipeline
import Rules
import Synchronization
import TestSupport
import Testing

/// ``ChangelogPartition`` on real brokers: claims, restore up to the claim, the read-back's
/// fencing, and a re-claim that reads from the start (docs/rules-state.md).
@Suite("The rules changelog, followed and written by owners (mock cluster and tansu)")
struct ChangelogPartitionTests {
    enum Broker: String, CaseIterable, CustomTestStringConvertible {
        case mock, tansu
        var testDescription: String { rawValue }
    }

    /// A broker with a 2-partition changelog topic, stopped when the value is released.
    struct Changelog {
        let bootstrap: String
        let topic = "rules-changelog"
        let mock: KafkaMockCluster?
        let tansu: Tansu?

        static func start(_ broker: Broker) async throws -> Changelog {
            switch broker {
            case .mock:
                let cluster = try KafkaMockCluster(brokers: 1)
                try cluster.createTopic("rules-changelog", partitions: 2)
                return Changelog(bootstrap: cluster.bootstrapServers, mock: cluster, tansu: nil)
            case .tansu:
                let tansu = try await Tansu.start()
                try await tansu.createTopic("rules-changelog", partitions: 2)
                return Changelog(bootstrap: tansu.bootstrapServers, mock: nil, tansu: tansu)
            }
        }

        func producer() throws -> KafkaProducer {
            var configuration = KafkaProducerConfiguration(bootstrapServers: [bootstrap])
            configuration.enableIdempotence = false
            configuration.properties["acks"] = "all"
            return try KafkaProducer(configuration: configuration)
        }

        func partition(_ owner: String, producer: KafkaProducer, state: Facts) -> ChangelogPartition {
            ChangelogPartition(
                .init(bootstrapServers: [bootstrap], topic: topic, partition: 1, partitionCount: 2), owner: owner, producer: producer,
                sink: state.add)
        }
    }

    /// What a sink received, in order.
    final class Facts: Sendable {
        private let facts = Mutex<[(Fact, Int64)]>([])
        private let sizes = Mutex<[Int]>([])
        @Sendable func add(_ batch: [(offset: Int64, fact: Fact)]) {
            facts.withLock { $0 += batch.map { ($0.fact, $0.offset) } }
            sizes.withLock { $0.append(batch.count) }
        }
        /// How many facts each call of the sink brought.
        var batchSizes: [Int] { sizes.withLock { $0 } }
        var offsets: [Int64] { facts.withLock { $0.map(\.1) } }
        var state: InMemoryRulesState {
            facts.withLock { facts in
                var state = InMemoryRulesState()
                for (fact, _) in facts { state.apply(fact) }
                return state
            }
        }
        func clear() { facts.withLock { $0.removeAll() } }
    }

    static func reservation(_ event: String, by owner: String) -> NotificationFact {
        NotificationFact(
            notification: NotificationID(eventID: event, mapping: "chat", subject: "u"), status: .reserved, attempt: 1, at: 1_000,
            expires: 90_000, owner: owner, subject: CapSubject(user: "u", category: "social", mapping: "chat"))
    }

    /// Follows `partition`, claims it and waits until it is restored, then stops following:
    /// whether it was.
    static func restored(_ partition: ChangelogPartition) async throws -> Bool {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await partition.follow() }
            try await partition.claim(at: 100)
            let restored = await partition.waitUntilRestored()
            group.cancelAll()
            return restored
        }
    }

    static func n(_ event: String) -> NotificationID { NotificationID(eventID: event, mapping: "chat", subject: "u") }

    @Test(
        "a new owner restores every fact before its claim; the old owner's reservation after it is fenced and left out; a re-claim reads from the start",
        arguments: Broker.allCases)
    func claimsAndFencing(broker: Broker) async throws {
        let changelog = try await Changelog.start(broker)
        let producer = try changelog.producer()
        let (aFacts, bFacts) = (Facts(), Facts())
        let a = changelog.partition("a#1", producer: producer, state: aFacts)
        let b = changelog.partition("b#1", producer: producer, state: bFacts)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await a.follow() }
            try await a.claim(at: 100)
            #expect(await a.waitUntilRestored())
            let first = try await a.write(Self.reservation("e1", by: "a#1"))
            #expect(await a.readBack(ofReservationAt: first) == .clear, "nobody else claimed")

            // b takes the partition over (a rebalance); a runs on as a zombie.
            group.addTask { try await b.follow() }
            let bClaim = try await b.claim(at: 200)
            #expect(await b.waitUntilRestored())
            #expect(bFacts.state.state(of: Self.n("e1"))?.status == .reserved, "a's reservation before b's claim is restored")
            let late = try await a.write(Self.reservation("e2", by: "a#1"))
            #expect(await a.readBack(ofReservationAt: late) == .fenced(byClaimAt: bClaim), "the zombie may not send")
            // b's tail reads past a's late reservation and leaves it out.
            let own = try await b.write(Self.reservation("e3", by: "b#1"))
            #expect(await b.readBack(ofReservationAt: own) == .clear)
            #expect(bFacts.state.state(of: Self.n("e2")) == nil, "a fenced writer's reservation does not count")
            #expect(bFacts.state.state(of: Self.n("e3"))?.status == .reserved)
            group.cancelAll()
        }

        // a, still assigned the partition in another run of events, claims again: from the start,
        // its new claim the filter point, so the reservations before it all count.
        aFacts.clear()
        a.reclaim(as: "a#2")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await a.follow() }
            try await a.claim(at: 300)
            #expect(await a.waitUntilRestored())
            let state = aFacts.state
            #expect(["e1", "e2", "e3"].allSatisfy { state.state(of: Self.n($0)) != nil }, "every reservation before the new claim")
            group.cancelAll()
        }
        await producer.close()
        withExtendedLifetime(changelog) {}
    }

    @Test("a restore hands the state batches of what has arrived (at most 500), every fact once and in order")
    func restoreInBatches() async throws {
        let changelog = try await Changelog.start(.tansu)
        let producer = try changelog.producer()
        let written = 3_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<written {
                group.addTask {
                    _ = try await producer.send(
                        KafkaProducerRecord(
                            topic: changelog.topic, partition: 1, value: FactCodec.encode(.notification(Self.reservation("e\(i)", by: "old#1")))))
                }
            }
            try await group.waitForAll()
        }
        let facts = Facts()
        #expect(try await Self.restored(changelog.partition("a#1", producer: producer, state: facts)))
        #expect(facts.offsets == (0..<Int64(written)).map { $0 })
        let sizes = facts.batchSizes
        #expect(sizes.allSatisfy { $0 <= 500 } && sizes.count < written / 10, "\(sizes.count) batches: \(sizes.prefix(20))")
        await producer.close()
        withExtendedLifetime(changelog) {}
    }

    @Test(
        "facts written while a record is in flight go out together in the next: each write answers its record's offset, and a new owner restores every fact once",
        arguments: Broker.allCases)
    func groupCommit(broker: Broker) async throws {
        let changelog = try await Changelog.start(broker)
        let producer = try changelog.producer()
        let a = changelog.partition("a#1", producer: producer, state: Facts())
        let written = 400
        let offsets = try await withThrowingTaskGroup(of: (String, Int64).self) { group in
            for i in 0..<written {
                group.addTask { ("e\(i)", try await a.write(Self.reservation("e\(i)", by: "a#1"))) }
            }
            return try await group.reduce(into: [String: Int64]()) { $0[$1.0] = $1.1 }
        }
        let records = Set(offsets.values)
        #expect(records.count < written / 4, "\(records.count) records for \(written) facts")
        let facts = Facts()
        let b = changelog.partition("b#1", producer: producer, state: facts)
        #expect(try await Self.restored(b))
        let state = facts.state
        #expect((0..<written).allSatisfy { state.state(of: Self.n("e\($0)"))?.status == .reserved }, "every fact restored")
        #expect(facts.offsets.count == written, "each once")
        #expect(facts.offsets == facts.offsets.sorted(), "in order")
        #expect(Set(facts.offsets) == records, "each at the offset its write answered")
        await producer.close()
        withExtendedLifetime(changelog) {}
    }

    @Test("a claim written with another partition count stops the follower, naming both counts; a record that is not a fact is counted and read past")
    func partitionCountAndDamage() async throws {
        let changelog = try await Changelog.start(.mock)
        let producer = try changelog.producer()
        _ = try await producer.send(KafkaProducerRecord(topic: changelog.topic, partition: 1, value: Array("not a fact".utf8)))
        let a = changelog.partition("a#1", producer: producer, state: Facts())
        #expect(try await Self.restored(a))
        #expect(a.undecodableRecords == 1)
        let old = Claim(at: 50, owner: "old#1", partitionCount: 3)
        _ = try await producer.send(KafkaProducerRecord(topic: changelog.topic, partition: 1, value: FactCodec.encode(.claim(old))))
        let b = changelog.partition("b#1", producer: producer, state: Facts())
        await #expect(throws: ChangelogPartition.FollowError.partitionCountChanged(claimedWith: 3, now: 2, atOffset: 2)) {
            try await b.follow()
        }
        await producer.close()
        withExtendedLifetime(changelog) {}
    }
}
