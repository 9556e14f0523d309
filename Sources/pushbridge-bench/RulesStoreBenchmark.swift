import Foundation
import Rules
import RulesStore

/// The rules store (docs/benchmarks.md, "Rules store"): a changelog of `notifications`
/// notifications, each a reservation and a `sent` fact (two device pushes), of users with 10
/// notifications each over a day, spread over 4 partitions, encoded as the changelog carries
/// them. Restore: decode and apply every fact into an empty file in batches of `batch`; then
/// the tail's rate on the filled file; the file's size once closed (no WAL); cap queries for a
/// user with 3 and with 30 notifications in the window, and a dedup lookup, each the median of
/// 5 rounds.
enum RulesStoreBenchmark {
    struct Options {
        var directory: String
        var notifications: Int
        var batch: Int
        var queries: Int
        var cacheMegabytes = 16
    }

    static let day: Int64 = 86_400_000
    static let start: Int64 = 1_800_000_000_000

    static func facts(of i: Int, user: String, at: Int64) -> [Fact] {
        let n = NotificationID(eventID: "event-\(i)", mapping: "chat.message", subject: user)
        let targets = ["fid:\(user)-phone", "fid:\(user)-tablet"]
        let subject = CapSubject(user: user, category: "social", mapping: "chat.message", devices: targets.map { DeviceKey(target: $0) })
        let owner = "pushbridge-7c9f-4d2e:17:9f3a"
        return [
            .notification(
                NotificationFact(notification: n, status: .reserved, attempt: 1, at: at, expires: at + day, owner: owner, subject: subject)),
            .notification(
                NotificationFact(
                    notification: n, status: .sent, attempt: 1, at: at + 40, expires: at + 40 + day, owner: owner,
                    devices: targets.map { DevicePushID(notification: n, target: $0) })),
        ]
    }

    /// The changelog's records, per partition, encoded: users of 10 notifications each over a day.
    static func changelog(_ count: Int) -> [[[UInt8]]] {
        var partitions: [[[UInt8]]] = Array(repeating: [], count: 4)
        for i in 0..<count {
            let user = "user-\(i / 10)"
            let at = start + Int64(i % 10) * day / 10 + Int64(i / 10 % 1000)
            for f in facts(of: i, user: user, at: at) { partitions[i / 10 % 4].append(FactCodec.encode(f)) }
        }
        return partitions
    }

    static func apply(_ store: RulesStore, _ partitions: [[[UInt8]]], batch: Int, from first: Int64 = 0) throws -> Int {
        var applied = 0
        for (p, records) in partitions.enumerated() {
            var offset = first
            for chunk in stride(from: 0, to: records.count, by: batch) {
                var facts: [(offset: Int64, fact: Fact)] = []
                for bytes in records[chunk..<min(chunk + batch, records.count)] {
                    facts.append((offset, try FactCodec.decode(bytes)))
                    offset += 1
                }
                try store.apply(partition: Int32(p), facts: facts)
                applied += facts.count
            }
        }
        return applied
    }

    static func run(_ o: Options) throws -> [(name: String, value: Double)] {
        let path = o.directory + "/rules-store-bench.sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let log = changelog(o.notifications)
        var figures: [(name: String, value: Double)] = []
        var clock = ContinuousClock.now
        var facts = 0
        do {
            let store = try RulesStore(path: path, cacheMegabytes: o.cacheMegabytes)
            facts = try apply(store, log, batch: o.batch)
            let restore = RegistryBenchmark.seconds(since: clock)
            figures.append(("rules_store_restore_seconds_per_million_facts", restore * 1e6 / Double(facts)))
            // The tail on the filled file: a tenth more notifications, later in the day.
            let shifted = changelog(o.notifications / 10).map { records in
                records.map { bytes -> [UInt8] in
                    guard case .notification(var f) = try? FactCodec.decode(bytes) else { return bytes }
                    f.notification = NotificationID(high: f.notification.high ^ 1, low: f.notification.low)
                    return FactCodec.encode(.notification(f))
                }
            }
            clock = ContinuousClock.now
            let tail = try apply(store, shifted, batch: o.batch, from: Int64(facts))
            figures.append(("rules_store_facts_per_second", Double(tail) / RegistryBenchmark.seconds(since: clock)))
            facts += tail
        }
        let notifications = Double(facts / 2)
        let bytes = Double((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        figures.append(("rules_store_bytes_per_notification", bytes / notifications))
        figures.append(("rules_store_mb_per_million_notifications", bytes / notifications * 1e6 / 1e6))
        figures += try queries(path: path, o)
        return figures
    }

    /// Cap queries for users with 3 and 30 notifications in the window, and dedup lookups.
    static func queries(path: String, _ o: Options) throws -> [(name: String, value: Double)] {
        let store = try RulesStore(path: path)
        let now = start + day
        var offset: Int64 = 10_000_000
        for (user, count) in [("q3", 3), ("q30", 30)] {
            let facts = (0..<count).flatMap { Self.facts(of: 90_000_000 + $0, user: user, at: now - 3_600_000 + Int64($0) * 1_000) }
            try store.apply(
                partition: 0,
                facts: facts.map { f in
                    defer { offset += 1 }
                    return (offset, f)
                })
        }
        let policy = RulesPolicy(sendLimit: 60_000)
        func median(_ body: () throws -> Void) throws -> Double {
            var rounds: [Double] = []
            for _ in 0..<5 {
                let clock = ContinuousClock.now
                for _ in 0..<o.queries { try body() }
                rounds.append(RegistryBenchmark.seconds(since: clock) * 1e6 / Double(o.queries))
            }
            return rounds.sorted()[2]
        }
        var figures: [(name: String, value: Double)] = []
        for (user, count) in [("q3", 3), ("q30", 30)] {
            let key = CapKey(user: .some(user), category: .some("social"), mapping: nil, device: nil)
            guard try store.notifications(of: key, countingAfter: now - day, policy: policy).count == count else {
                throw BenchError("cap query for \(user) did not find its \(count) notifications")
            }
            figures.append(
                (
                    "rules_store_cap_query_\(count)_in_window_microseconds",
                    try median { _ = try store.notifications(of: key, countingAfter: now - day, policy: policy) }
                ))
        }
        let push = DevicePushID(
            notification: NotificationID(eventID: "event-5", mapping: "chat.message", subject: "user-0"), target: "fid:user-0-phone")
        guard try store.acknowledgement(of: push) != nil else { throw BenchError("dedup lookup found nothing") }
        figures.append(("rules_store_dedup_lookup_microseconds", try median { _ = try store.acknowledgement(of: push) }))
        return figures
    }
}
