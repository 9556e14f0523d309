import DeviceRegistry
import Foundation
import Kafka
import Logging
import ProcessHarness

/// The device registry at scale (docs/benchmarks.md, "Device registry"): a store filled
/// directly with `users` × `devicesPerUser` devices, then the same through Kafka at a smaller
/// size; load rate, reopen (restart) time, resident memory, lookup latency, file size.
enum RegistryBenchmark {
    struct Options {
        var directory: String
        var users: Int
        var devicesPerUser: Int
        var cacheMegabytes: Int
        var lookups: Int
        var bootstrap: String?
        var kafkaUsers: Int
    }

    static func run(_ o: Options) async throws -> [(name: String, value: Double)] {
        var figures: [(name: String, value: Double)] = []
        let path = o.directory + "/registry-bench.sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }

        // 1. Load directly, in batches of 5,000 users as the follower applies them.
        var store: RegistryStore? = try RegistryStore(path: path, cacheMegabytes: o.cacheMegabytes)
        let batch = 5_000
        let loadStart = ContinuousClock.now
        var offset: Int64 = 0
        for first in stride(from: 0, to: o.users, by: batch) {
            let updates = (first..<min(first + batch, o.users)).map { update(user: $0, devices: o.devicesPerUser) }
            offset += Int64(updates.count)
            try store!.apply(updates, offsets: [0: offset], topic: "bench-registry")
        }
        let loadSeconds = seconds(since: loadStart)
        let devices = Double(o.users * o.devicesPerUser)
        figures += [
            ("registry_devices", devices),
            ("registry_users", Double(o.users)),
            ("registry_load_seconds", loadSeconds),
            ("registry_load_users_per_second", Double(o.users) / loadSeconds),
            ("registry_load_devices_per_second", devices / loadSeconds),
            ("registry_rss_after_load_mb", procStatusMegabytes("VmRSS:")),
            ("registry_peak_rss_after_load_mb", procStatusMegabytes("VmHWM:")),
        ]

        // 2. Restart: close (checkpoints the WAL into the file), reopen, first lookup.
        store = nil
        figures.append(("registry_file_mb", fileMegabytes(path)))
        let reopenStart = ContinuousClock.now
        let reopened = try RegistryStore(path: path, cacheMegabytes: o.cacheMegabytes)
        _ = try reopened.devices(of: userID(0))
        figures.append(("registry_reopen_seconds", seconds(since: reopenStart)))
        guard reopened.deviceCount == Int(devices) else {
            throw BenchError("the store holds \(reopened.deviceCount) devices after the reopen, not \(Int(devices))")
        }

        // 3. Lookups from 4 tasks over random users: per-lookup latency.
        let perTask = o.lookups / 4
        let samples = try await withThrowingTaskGroup(of: [Double].self) { group in
            for t in 0..<4 {
                group.addTask {
                    var random = SplitMix(seed: UInt64(t + 1))
                    var out: [Double] = []
                    out.reserveCapacity(perTask)
                    for _ in 0..<perTask {
                        let user = Int(random.next() % UInt64(o.users))
                        let start = ContinuousClock.now
                        let found = try reopened.devices(of: userID(user))
                        out.append(seconds(since: start) * 1e6)
                        guard found.count == o.devicesPerUser else { throw BenchError("user \(user): \(found.count) devices") }
                    }
                    return out
                }
            }
            return try await group.reduce(into: [Double]()) { $0 += $1 }
        }.sorted()
        figures += [
            ("registry_lookup_p50_us", percentile(samples, 0.50)),
            ("registry_lookup_p99_us", percentile(samples, 0.99)),
            ("registry_lookup_p999_us", percentile(samples, 0.999)),
            ("registry_rss_after_lookups_mb", procStatusMegabytes("VmRSS:")),
            ("registry_peak_rss_mb", procStatusMegabytes("VmHWM:")),
        ]

        // 4. Through Kafka at a smaller size: produce, follow into a new file, restart.
        if let bootstrap = o.bootstrap {
            figures += try await kafka(bootstrap: bootstrap, users: o.kafkaUsers, devicesPerUser: o.devicesPerUser, directory: o.directory)
        }
        return figures
    }

    /// Produces `users` records, loads them with a follower (records/s to caught up), then
    /// restarts the follower on the same file (seconds to caught up again).
    static func kafka(bootstrap: String, users: Int, devicesPerUser: Int, directory: String) async throws -> [(name: String, value: Double)] {
        let topic = "bench-registry"
        var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: [bootstrap])
        producerConfiguration.linger = .milliseconds(20)
        producerConfiguration.properties["batch.size"] = "1000000"
        let producer = try KafkaProducer(configuration: producerConfiguration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for user in 0..<users {
                if user >= 5_000 { try await group.next() }
                let record = KafkaProducerRecord(
                    topic: topic, key: Array(userID(user).utf8), value: json(update(user: user, devices: devicesPerUser)))
                group.addTask { _ = try await producer.send(record) }
            }
            try await group.waitForAll()
        }
        await producer.close()

        let path = directory + "/registry-bench-kafka.sqlite"
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let store = try RegistryStore(path: path)
        let loadStart = ContinuousClock.now
        let first = RegistryFollower(bootstrapServers: [bootstrap], properties: [:], topic: topic, store: store, logger: logger)
        try await untilCaughtUp(first)
        let loadSeconds = seconds(since: loadStart)
        let rssAfterLoad = procStatusMegabytes("VmRSS:")
        guard store.userCount == users else { throw BenchError("the follower loaded \(store.userCount) users, not \(users)") }

        let restartStart = ContinuousClock.now
        let second = RegistryFollower(bootstrapServers: [bootstrap], properties: [:], topic: topic, store: store, logger: logger)
        try await untilCaughtUp(second)
        return [
            ("registry_kafka_users", Double(users)),
            ("registry_kafka_load_seconds", loadSeconds),
            ("registry_kafka_records_per_second", Double(users) / loadSeconds),
            ("registry_kafka_rss_after_load_mb", rssAfterLoad),
            ("registry_kafka_restart_ready_seconds", seconds(since: restartStart)),
            ("registry_kafka_restart_applied", Double(second.applied)),
        ]
    }

    /// Runs the follower until it has caught up, then stops it.
    static func untilCaughtUp(_ follower: RegistryFollower) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await follower.run() }
            _ = await follower.waitUntilCaughtUp()
            group.cancelAll()
            try await group.waitForAll()
        }
    }

    /// A UUID-shaped user ID, the same for the same index, in no particular order.
    static func userID(_ i: Int) -> String {
        var random = SplitMix(seed: UInt64(i) &* 0x9E37_79B9_7F4A_7C15)
        let a = random.next()
        let b = random.next()
        let hex = String(a, radix: 16).leftPadded(16) + String(b, radix: 16).leftPadded(16)
        let c = Array(hex)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-" + String(c[20..<32])
    }

    /// Tokens shaped as FCM's: 163 characters (an 11-character instance part, `:APA91b`, 145 more).
    static func update(user: Int, devices: Int) -> RegistryUpdate {
        var random = SplitMix(seed: UInt64(user) &+ 0xC0FF_EE00)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        func chars(_ n: Int) -> String {
            var bytes = [UInt8](repeating: 0, count: n)
            for i in 0..<n { bytes[i] = alphabet[Int(random.next() & 63)] }
            return String(decoding: bytes, as: UTF8.self)
        }
        let list = (0..<devices).map { d in
            RegisteredDevice(
                kind: .token, id: chars(11) + ":APA91b" + chars(145), platform: d % 2 == 0 ? "android" : "ios", app: "consumer",
                labels: ["lang": "de"])
        }
        return RegistryUpdate(user: userID(user), devices: list)
    }

    static func json(_ update: RegistryUpdate) -> [UInt8] {
        let devices = (update.devices ?? []).map { d in
            "{\"token\":\"\(d.id)\",\"platform\":\"\(d.platform ?? "android")\",\"app\":\"consumer\",\"labels\":{\"lang\":\"de\"}}"
        }
        return Array("{\"devices\":[\(devices.joined(separator: ","))]}".utf8)
    }

    static func fileMegabytes(_ path: String) -> Double {
        ["", "-wal"].reduce(0.0) { sum, suffix in
            let size = (try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int) ?? 0
            return sum + Double(size) / 1_048_576
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let d = ContinuousClock.now - start
        return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }

    struct SplitMix {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
