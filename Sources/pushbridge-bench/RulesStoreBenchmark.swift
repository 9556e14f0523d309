import Foundation
import ProcessHarness
import Rules
import RulesStore
import Synchronization

/// The rules store (docs/benchmarks.md, "Rules store"): a changelog as stage 2 writes it, in
/// time order, of `notifications` notifications, each a reservation and, `outcomeLag`
/// notifications of its partition later, its `sent` fact (two device pushes); users (10
/// notifications each over a day) interleaved at random, a user's notifications in one of 4
/// partitions; encoded as the changelog carries them. Restore: decode and apply every fact into
/// an empty file in batches of `batch` (time, and the applying thread's CPU time: a figure the
/// machine's load changes less); then the tail's rate on the filled file (a tenth more
/// notifications of the same users, after them in time), with each batch's time, and the time
/// of cap queries another thread makes meanwhile (one a millisecond: what a worker's reads wait
/// for while the tail writes); the file's size once closed (no WAL); cap queries for a user with
/// 3 and with 30 notifications in the window, and the dedup verdict of a notification's two
/// device pushes, each the median of 5 rounds.
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
    /// A reservation's outcome comes this many notifications of its partition later (an FCM
    /// round trip at a worker's rate), so the two mostly land in different batches.
    static let outcomeLag = 300
    static let owner = "pushbridge-7c9f-4d2e:17:9f3a"

    /// Notification `i` of a changelog of `users` users: its user (a permutation of them, so
    /// consecutive notifications are of users far apart), partition, and the targets of its devices.
    static func subject(of i: Int, users: Int) -> (user: String, partition: Int, targets: [String]) {
        let u = (i % users) * 1_000_003 % users
        let user = "user-\(u)"
        return (user, u % 4, ["fid:\(user)-phone", "fid:\(user)-tablet"])
    }

    static func notification(_ i: Int, user: String) -> NotificationID {
        NotificationID(eventID: "event-\(i)", mapping: "chat.message", subject: user)
    }

    static func reservation(_ n: NotificationID, user: String, targets: [String], at: Int64) -> Fact {
        let subject = CapSubject(user: user, category: "social", mapping: "chat.message", devices: targets.map { DeviceKey(target: $0) })
        return .notification(
            NotificationFact(notification: n, status: .reserved, attempt: 1, at: at, expires: at + day, owner: owner, subject: subject))
    }

    static func sent(_ n: NotificationID, targets: [String], at: Int64) -> Fact {
        .notification(
            NotificationFact(
                notification: n, status: .sent, attempt: 1, at: at, expires: at + day, owner: owner,
                devices: targets.map { DevicePushID(notification: n, target: $0) }))
    }

    /// The changelog's records of notifications `range`, per partition, encoded, in time order:
    /// `users` users, one notification every `day / (10 × users)` ms from `start`.
    static func changelog(_ range: Range<Int>, users: Int) -> [[[UInt8]]] {
        let step = max(day / Int64(10 * users), 1)
        var partitions: [[[UInt8]]] = Array(repeating: [], count: 4)
        var outcomes: [[[UInt8]]] = Array(repeating: [], count: 4)
        for i in range {
            let (user, p, targets) = subject(of: i, users: users)
            let n = notification(i, user: user)
            let at = start + Int64(i) * step
            partitions[p].append(FactCodec.encode(reservation(n, user: user, targets: targets, at: at)))
            outcomes[p].append(FactCodec.encode(sent(n, targets: targets, at: at + 40)))
            if outcomes[p].count > outcomeLag { partitions[p].append(outcomes[p].removeFirst()) }
        }
        for p in 0..<4 { partitions[p] += outcomes[p] }
        return partitions
    }

    /// Applies `partitions` in batches of `batch`, partition after partition, from offset `first`.
    /// - Returns: the facts applied and each batch's time (seconds).
    static func apply<Store: RulesStateStore>(
        _ store: Store, _ partitions: [[[UInt8]]], batch: Int, from first: Int64
    ) throws -> (facts: Int, times: [Double]) {
        var applied = 0
        var times: [Double] = []
        for (p, records) in partitions.enumerated() {
            var offset = first
            for chunk in stride(from: 0, to: records.count, by: batch) {
                let clock = ContinuousClock.now
                var facts: [(offset: Int64, fact: Fact)] = []
                for bytes in records[chunk..<min(chunk + batch, records.count)] {
                    facts.append((offset, try FactCodec.decode(bytes)))
                    offset += 1
                }
                try store.apply(partition: Int32(p), facts: facts)
                times.append(RegistryBenchmark.seconds(since: clock))
                applied += facts.count
            }
        }
        return (applied, times)
    }

    static func run(_ o: Options) throws -> [(name: String, value: Double)] {
        let path = o.directory + "/rules-store-bench.sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let users = max(o.notifications / 10, 1)
        let log = changelog(0..<o.notifications, users: users)
        // The tail on the filled file: a tenth more notifications of the same users, later.
        let tailLog = changelog(o.notifications..<o.notifications + max(o.notifications / 10, 1), users: users)
        // First, while nothing else has been allocated and freed (which the store in memory
        // would reuse, and its growth would not show).
        var figures = try memory(log, tailLog, users: users, batch: o.batch)
        var facts = 0
        do {
            let store = try RulesStore(path: path, cacheMegabytes: o.cacheMegabytes)
            var clock = ContinuousClock.now
            var cpu = threadCPUSeconds()
            facts = try apply(store, log, batch: o.batch, from: 0).facts
            figures.append(("rules_store_restore_seconds_per_million_facts", RegistryBenchmark.seconds(since: clock) * 1e6 / Double(facts)))
            figures.append(("rules_store_restore_cpu_microseconds_per_fact", (threadCPUSeconds() - cpu) * 1e6 / Double(facts)))
            let reads = TailReads(store: store, users: users)
            clock = ContinuousClock.now
            cpu = threadCPUSeconds()
            let tail = try apply(store, tailLog, batch: o.batch, from: Int64(facts))
            figures.append(("rules_store_facts_per_second", Double(tail.facts) / RegistryBenchmark.seconds(since: clock)))
            figures.append(("rules_store_tail_cpu_microseconds_per_fact", (threadCPUSeconds() - cpu) * 1e6 / Double(tail.facts)))
            let times = tail.times.sorted()
            figures.append(("rules_store_batch_p99_milliseconds", times[min(times.count - 1, times.count * 99 / 100)] * 1e3))
            figures.append(("rules_store_batch_max_milliseconds", (times.last ?? 0) * 1e3))
            let waits = reads.stop().sorted()
            figures.append(("rules_store_read_during_tail_p99_microseconds", waits[min(waits.count - 1, waits.count * 99 / 100)]))
            figures.append(("rules_store_read_during_tail_max_microseconds", waits.last ?? 0))
            facts += tail.facts
        }
        let notifications = Double(facts / 2)
        let bytes = Double((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0)
        figures.append(("rules_store_bytes_per_notification", bytes / notifications))
        figures.append(("rules_store_mb_per_million_notifications", bytes / notifications * 1e6 / 1e6))
        figures += try queries(path: path, users: users, o)
        return figures
    }

    /// The same changelog into the store in memory (`rules.state_store: memory`): its CPU a
    /// fact, and what it holds in memory a notification (the process's resident size before and
    /// after); then the protocol's own CPU per capped push on it (``RulesFloorBenchmark``).
    static func memory(_ log: [[[UInt8]]], _ tailLog: [[[UInt8]]], users: Int, batch: Int) throws -> [(name: String, value: Double)] {
        let before = procStatusMegabytes("VmRSS:")
        let store = MemoryRulesStore()
        let cpu = threadCPUSeconds()
        let restored = try apply(store, log, batch: batch, from: 0).facts
        let tail = try apply(store, tailLog, batch: batch, from: Int64(restored)).facts
        let cpuPerFact = (threadCPUSeconds() - cpu) * 1e6 / Double(restored + tail)
        let bytes = (procStatusMegabytes("VmRSS:") - before) * 1_048_576 / Double(store.count)
        let floor = try RulesFloorBenchmark.run(store, users: users, pushes: min(100_000, restored / 2), now: start + day + day / 5)
        return [
            ("rules_store_memory_cpu_microseconds_per_fact", cpuPerFact),
            ("rules_store_memory_bytes_per_notification", bytes),
            ("rules_store_protocol_cpu_microseconds_per_push", floor),
        ]
    }

    /// CPU seconds the calling thread has used (its writes' system time included; not the
    /// reading thread's, nor the kernel's write-back).
    static func threadCPUSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// Cap queries for users with 3 and 30 notifications in the window, and dedup verdicts.
    static func queries(path: String, users: Int, _ o: Options) throws -> [(name: String, value: Double)] {
        let store = try RulesStore(path: path)
        let now = start + day
        var offset: Int64 = 100_000_000
        for (user, count) in [("q3", 3), ("q30", 30)] {
            var facts: [Fact] = []
            for k in 0..<count {
                let n = notification(90_000_000 + k, user: user)
                let at = now - 3_600_000 + Int64(k) * 1_000
                facts += [reservation(n, user: user, targets: ["fid:\(user)"], at: at), sent(n, targets: ["fid:\(user)"], at: at + 40)]
            }
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
        let (user, _, targets) = subject(of: 5, users: users)
        let n = notification(5, user: user)
        func dedup() throws -> [String] { try RulesEvaluation.dedup(n, targets: targets, now: now, window: day, state: store).duplicates }
        guard try dedup() == targets else { throw BenchError("the dedup verdict did not find both acknowledged pushes") }
        figures.append(("rules_store_dedup_lookup_microseconds", try median { _ = try dedup() }))
        return figures
    }
}

/// A `[user, category]` cap query for a user of the file every millisecond, from a thread of its
/// own until ``stop()``, each one's time kept: how long a worker's reads wait while the tail writes.
final class TailReads: Sendable {
    /// nil once stopped: the thread holds the store only while it reads.
    private let store: Mutex<RulesStore?>
    private let stopping = Mutex(false)
    private let times = Mutex<[Double]>([])
    private let finished = DispatchSemaphore(value: 0)

    init(store: RulesStore, users: Int) {
        self.store = Mutex(store)
        let policy = RulesPolicy(sendLimit: 60_000)
        let now = RulesStoreBenchmark.start + RulesStoreBenchmark.day
        Thread { [self] in
            var kept: [Double] = []
            var i = 0
            while !stopping.withLock({ $0 }), let store = self.store.withLock({ $0 }) {
                let user = RulesStoreBenchmark.subject(of: i &* 7_919, users: users).user
                let key = CapKey(user: .some(user), category: .some("social"), mapping: nil, device: nil)
                let clock = ContinuousClock.now
                _ = try? store.notifications(of: key, countingAfter: now - RulesStoreBenchmark.day, policy: policy)
                kept.append(RegistryBenchmark.seconds(since: clock) * 1e6)
                i += 1
                usleep(1_000)
            }
            times.withLock { $0 = kept }
            finished.signal()
        }.start()
    }

    /// Stops the thread; each query's time (µs).
    func stop() -> [Double] {
        stopping.withLock { $0 = true }
        finished.wait()
        store.withLock { $0 = nil }
        return times.withLock { $0 }
    }
}
