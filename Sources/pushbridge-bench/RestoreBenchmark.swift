import Foundation
import Kafka
import Pipeline
import ProcessHarness
import Rules
import RulesStore

/// How long a new owner of a state partition takes to restore it (issue 55: "how long a new
/// owner takes to restore a partition's state"): a changelog partition on the broker holding
/// `notifications` × 2 facts (a reservation and its `sent` outcome, as stage 2 writes them),
/// then ``StatePartitionOwner/run(_:)`` with an empty rules store file, timed from its start
/// until it is restored (its claim read back). The worker's CPU is measured too.
enum RestoreBenchmark {
    static func run(bootstrap: String, topic: String, notifications: Int, directory: String) async throws -> [(name: String, value: Double)] {
        let producer = try KafkaProducer(configuration: RekeyBenchmark.producerConfiguration(bootstrap))
        try await write(notifications, to: topic, producer: producer)
        let path = directory + "/restore-\(UUID().uuidString.prefix(8)).sqlite"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try RulesStore(path: path)
        let configuration = ChangelogPartition.Configuration(bootstrapServers: [bootstrap], topic: topic, partition: 0, partitionCount: 4)
        let owner = StatePartitionOwner(configuration, owner: "bench#1", producer: producer, store: store) {
            Int64(Date().timeIntervalSince1970 * 1_000)
        }
        let (start, cpu) = (ContinuousClock.now, procCPUSeconds())
        try await owner.run { _ in }
        let (seconds, cpuSeconds) = (KafkaBenchmark.seconds(ContinuousClock.now - start), procCPUSeconds() - cpu)
        await producer.close()
        // The state holds what was written: the last notification's push is acknowledged.
        let last = notification(notifications - 1)
        guard let state = try store.state(of: last), state.status == .sent, state.acknowledged(push(last)) != nil else {
            throw BenchError("the restored store lacks the last notification's facts")
        }
        let facts = Double(notifications * 2)
        return [
            ("rules_restore_facts", facts),
            ("rules_restore_seconds", seconds),
            ("rules_restore_seconds_per_million_facts", seconds / facts * 1_000_000),
            ("rules_restore_cpu_seconds_per_million_facts", cpuSeconds / facts * 1_000_000),
        ]
    }

    static func notification(_ i: Int) -> NotificationID { NotificationID(eventID: "e\(i)", mapping: "chat", subject: "u\(i % 10_000)") }
    static func push(_ n: NotificationID) -> DevicePushID { DevicePushID(notification: n, target: "fid:d") }

    /// A reservation and its `sent` fact per notification, users in turn, an hour apart in all.
    static func write(_ notifications: Int, to topic: String, producer: KafkaProducer) async throws {
        let start: Int64 = 1_790_000_000_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            var inFlight = 0
            for i in 0..<notifications {
                let n = notification(i)
                let at = start + Int64(i) * 3_600_000 / Int64(max(notifications, 1))
                let subject = CapSubject(user: "u\(i % 10_000)", category: "social", mapping: "chat", devices: [DeviceKey(target: "fid:d")])
                let facts = [
                    NotificationFact(
                        notification: n, status: .reserved, attempt: 1, at: at, expires: at + 86_400_000, owner: "old#1", subject: subject),
                    NotificationFact(
                        notification: n, status: .sent, attempt: 1, at: at + 40, expires: at + 86_400_000, owner: "old#1", devices: [push(n)]),
                ]
                for fact in facts {
                    if inFlight >= 5_000 {
                        try await group.next()
                        inFlight -= 1
                    }
                    inFlight += 1
                    let record = KafkaProducerRecord(topic: topic, partition: 0, key: n.bytes, value: FactCodec.encode(.notification(fact)))
                    group.addTask { _ = try await producer.send(record) }
                }
            }
            try await group.waitForAll()
        }
    }
}
