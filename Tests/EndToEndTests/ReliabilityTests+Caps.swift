import FCMEmulator
import Foundation
import JSON
import Kafka
import Synchronization
import TestSupport
import Testing

/// Caps and deduplication in the chaos runs (docs/reliability.md): each batch carries a few
/// capped subjects (device tokens), each with more distinct events than the cap or with one event
/// alone, the first of each subject's events written twice. The workers run in re-key mode (the
/// default: the events topic is keyed by device token, not by the cap's subject as such), so
/// stage 1 writes the capped events to the by-subject topic and the group
/// `reliability.rules` decides them there. The ledger (``CappedSubjects``) wants exactly the
/// notifications the cap allows per subject, under the same kills and storms as everything else.
extension ReliabilityTests {
    static let capMax = 2
    static let cappedMapping = """
          reliability.capped:
            target: {token: {field: /token}}
            body: {key: capped}
            data: {event: {field: /id}}
            cap: {max: \(capMax), per: 1h, by: [device]}
        """
    /// Distinct events of each capped subject in a batch: two beyond the cap, one beyond it, one
    /// alone (its repeat must be withheld as a duplicate). 11 records a batch with the repeats.
    static let cappedShapes = [4, 3, 1]
    /// The partitions of the events topic in the chaos runs, and of the caps' two topics.
    static let chaosPartitions: Int32 = 8
    static var bySubjectTopic: String { "pushbridge.\(group).by-subject" }

    /// Creates the by-subject and changelog topics (docs/rules.md#caps-and-dedup: as many
    /// partitions each), before any worker starts.
    static func prepareCaps(_ e: EndToEnd) async throws {
        try await e.createTopic(bySubjectTopic, partitions: chaosPartitions)
        try await e.createTopic("pushbridge.\(group).rules-changelog", partitions: chaosPartitions)
    }

    /// Batch `b`'s capped events: the records (keyed by device token), and each subject's event
    /// IDs as written.
    static func cappedRecords(batch b: Int, topic: String) -> (records: [KafkaProducerRecord], written: [String: [String]]) {
        var records: [KafkaProducerRecord] = []
        var written: [String: [String]] = [:]
        for (s, distinct) in cappedShapes.enumerated() {
            let token = "capped-\(b)-\(s)"
            let ids = (0..<distinct).map { "\(token)-e\($0)" }
            for id in [ids[0]] + ids {
                let value = #"{"type":"reliability.capped","id":"\#(id)","token":"\#(token)"}"#
                records.append(KafkaProducerRecord(topic: topic, key: Array(token.utf8), value: Array(value.utf8)))
            }
            written[token] = [ids[0]] + ids
        }
        return (records, written)
    }

    /// Waits until the rules group has committed every record of the by-subject topic: every
    /// capped event decided, its push sent or withheld. Call it once the events topic is all
    /// committed (so stage 1 has written everything it will). The topic's ends are read from its
    /// records, not asked as watermarks: tansu answers those too low (by 4 of 22 records in a
    /// partition here; docs/registry.md). Each of the `records` capped events is there at least
    /// once (more after a crash between the re-key and the commit). Returns whether all were
    /// decided, and the event IDs found in the by-subject topic with their copies.
    static func waitUntilDecided(_ e: EndToEnd, records: Int, timeout: Duration) async throws -> (decided: Bool, rekeyed: [String: Int]) {
        let partitions = (0..<chaosPartitions).map { TopicPartition(topic: bySubjectTopic, partition: $0) }
        let (ends, rekeyed) = try await reKeyed(e, partitions, atLeast: records)
        progress("waiting for \(group).rules to decide \(ends.values.reduce(0, +)) re-keyed records", since: nil)
        let admin = try KafkaConsumer(configuration: e.events.consumerConfiguration(group: "\(group).rules"))
        let deadline = ContinuousClock.now + timeout
        var decided = false
        while !decided, ContinuousClock.now < deadline {
            let committed = (try? await admin.committed(partitions)) ?? []
            let at = Dictionary(committed.map { ($0.partition, $0.offset.isConcrete ? $0.offset.rawValue : 0) }) { a, _ in a }
            decided = ends.allSatisfy { at[$0.key] ?? 0 >= $0.value }
            if !decided { try? await Task.sleep(for: .seconds(1)) }
        }
        await admin.close()
        return (decided, rekeyed)
    }

    /// The by-subject topic read until at least `atLeast` records came and then none for 3 s (or
    /// a minute passed): each partition's next offset after its last record, and the event IDs
    /// (from the values stage 1 kept) with their copies.
    static func reKeyed(
        _ e: EndToEnd, _ partitions: [TopicPartition], atLeast: Int
    ) async throws -> (ends: [Int32: Int64], ids: [String: Int]) {
        let reader = try KafkaConsumer(configuration: e.events.consumerConfiguration(group: nil))
        try reader.assign(partitions.map { TopicPartitionOffset($0, offset: .beginning) })
        let ends = Mutex<(ends: [Int32: Int64], ids: [String: Int], last: ContinuousClock.Instant)>(([:], [:], .now))
        let reading = Task {
            for try await m in reader.messages {
                let id = String(decoding: m.value, as: UTF8.self).split(separator: #""id":""#).dropFirst().first?.prefix { $0 != "\"" }
                ends.withLock {
                    $0.ends[m.partition] = max($0.ends[m.partition] ?? 0, m.offset + 1)
                    $0.ids[id.map(String.init) ?? "?", default: 0] += 1
                    $0.last = .now
                }
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline,
            ends.withLock({ $0.ends.values.reduce(0, +) < atLeast || ContinuousClock.now - $0.last < .seconds(3) })
        {
            try await Task.sleep(for: .milliseconds(200))
        }
        reading.cancel()
        _ = await reading.result
        await reader.close()
        return ends.withLock { ($0.ends, $0.ids) }
    }

    /// What FCM (the emulator) accepted for the capped subjects: device token → event ID (the
    /// message's `data.event`) → acceptances.
    static func delivered(_ emulator: FCMEmulator) -> [String: [String: Int]] {
        var delivered: [String: [String: Int]] = [:]
        for m in emulator.messages where !m.validateOnly {
            guard let token = m.token, token.hasPrefix("capped-"), case .string(let event)? = m.message["data"]?["event"] else { continue }
            delivered[token, default: [:]][event, default: 0] += 1
        }
        return delivered
    }

    /// Prints the caps' figures and checks that no subject got more than its cap allows (fewer
    /// is lost, and a capped event dead-lettered is a good one dead-lettered: ``settle``
    /// checks both).
    static func report(_ caps: CappedSubjects.Settlement, of capped: CappedSubjects, name: String) {
        print(
            """
            \(name)_capped_events: \(capped.records)
            \(name)_capped_rekeyed: \(capped.rekeyed?.values.reduce(0, +) ?? 0)
            \(name)_capped_subjects: \(capped.written.count)
            \(name)_capped_notifications: \(caps.notifications)
            \(name)_capped_notifications_allowed: \(caps.expected)
            \(name)_capped_withheld: \(caps.cappedWithheld)
            \(name)_dedup_withheld: \(caps.dedupWithheld)
            \(name)_capped_duplicates: \(caps.duplicates)
            \(name)_cap_exceeded: \(caps.exceeded.count)
            """)
        #expect(caps.exceeded.isEmpty, "subjects beyond their cap: \(caps.exceeded.prefix(10))")
    }
}
