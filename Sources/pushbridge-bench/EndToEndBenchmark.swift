import Foundation
import JSON
import Kafka
import ProcessHarness

/// tansu → `pushbridge run` (a separate process, release build) → FCM.
///
/// - Throughput (`e2e`): N events are produced first, then the worker starts; the clock runs from
///   its first consumed event to its last finished one (its own `/metrics`). CPU time and peak RSS
///   come from /proc. FCM is the static nginx stub, so the figure is pushbridge's, not a server's.
/// - Latency (`e2e-latency`): events are produced at a fixed rate while the worker runs; the
///   worker's `pushbridge_delivery_lag_seconds` histogram (record create time → FCM acknowledged)
///   gives p50/p99 the way Prometheus' histogram_quantile would.
enum EndToEndBenchmark {
    struct Setup {
        var bootstrap: String
        var topic: String
        var worker: String
        var config: String
        var metricsPort: Int
        var group: String
    }

    static func throughput(_ s: Setup, events: Int) async throws -> [(name: String, value: Double)] {
        let ends = try await produce(s, count: events, rate: nil)
        let worker = try WorkerProcess.start(s)
        defer { worker.stop() }
        var maxInFlight = 0.0
        let (elapsed, cpu) = try await drain(
            worker, events: events, timeout: .seconds(600),
            sample: { m in maxInFlight = max(maxInFlight, WorkerProcess.sum("pushbridge_events_in_flight", in: m)) })
        let committed = try await waitUntilCommitted(s, ends: ends)
        return [
            ("e2e_events_per_second", Double(events) / elapsed),
            ("cpu_us_per_event", cpu * 1e6 / Double(events)),
            ("peak_rss_mb", worker.peakRSSMegabytes()),
            ("max_events_in_flight", maxInFlight),
            ("e2e_all_committed", committed ? 1 : 0),
        ]
    }

    /// Waits until `worker` has finished `events` events, reading its metrics every 20 ms (each
    /// read also given to `sample`); returns the seconds and the CPU seconds from its first
    /// consumed event (when `started` is called, so a caller can take its own figures from there).
    static func drain(
        _ worker: WorkerProcess, events: Int, timeout: Duration, started: () -> Void = {}, sample: (String) -> Void = { _ in }
    ) async throws -> (seconds: Double, cpuSeconds: Double) {
        var t0: ContinuousClock.Instant?
        var cpu0 = 0.0
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let m = (try? worker.get("/metrics").body) ?? ""
            if t0 == nil, WorkerProcess.sum("pushbridge_events_consumed_total", in: m) > 0 {
                t0 = .now
                cpu0 = worker.cpuSeconds()
                started()
            }
            sample(m)
            if WorkerProcess.sum("pushbridge_events_total", in: m) >= Double(events) { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        guard let t0 else { throw BenchError("the worker consumed nothing: \(worker.logTail())") }
        let elapsed = KafkaBenchmark.seconds(ContinuousClock.now - t0)
        let cpu = worker.cpuSeconds() - cpu0
        let done = (try? worker.metric("pushbridge_events_total")) ?? 0
        guard done >= Double(events) else { throw BenchError("only \(done) of \(events) events finished: \(worker.logTail())") }
        return (elapsed, cpu)
    }

    static func latency(_ s: Setup, rate: Int, seconds: Int) async throws -> [(name: String, value: Double)] {
        let worker = try await WorkerProcess.startConsuming(s)
        defer { worker.stop() }
        let count = rate * seconds
        _ = try await produce(s, count: count, rate: rate)
        let deadline = ContinuousClock.now + .seconds(120)
        while ((try? worker.metric("pushbridge_events_total")) ?? 0) < Double(count), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        let buckets = worker.histogram("pushbridge_delivery_lag_seconds")
        guard let total = buckets.last?.count, total >= Double(count) else {
            throw BenchError("\(buckets.last?.count ?? 0) of \(count) events finished: \(worker.logTail())")
        }
        // The FCM part alone (send → answer, coarser buckets), to tell it from Kafka's part.
        let sends = worker.histogram("pushbridge_send_latency_seconds")
        return [
            ("e2e_latency_rate_per_second", Double(rate)),
            ("e2e_latency_p50_ms", quantile(0.5, buckets) * 1000),
            ("e2e_latency_p99_ms", quantile(0.99, buckets) * 1000),
            ("e2e_send_latency_p50_ms", quantile(0.5, sends) * 1000),
            ("e2e_send_latency_p99_ms", quantile(0.99, sends) * 1000),
        ]
    }

    /// Prometheus' histogram_quantile: linear within the bucket that holds the quantile.
    static func quantile(_ q: Double, _ buckets: [(le: Double, count: Double)]) -> Double {
        guard let total = buckets.last?.count, total > 0 else { return .nan }
        let rank = q * total
        var lower = (le: 0.0, count: 0.0)
        for b in buckets {
            if b.count >= rank {
                if b.le.isInfinite { return lower.le }
                return lower.le + (b.le - lower.le) * (rank - lower.count) / max(b.count - lower.count, 1)
            }
            lower = b
        }
        return lower.le
    }

    /// Produces `count` welcome events (unique tokens), at `rate` per second if given; or the
    /// events `event` makes from their number.
    /// - Parameter key: each event's record key (default `k<i>`), placed by librdkafka's default partitioner.
    static func produce(
        _ s: Setup, count: Int, rate: Int? = nil, event: (@Sendable (Int) -> String)? = nil, key: (@Sendable (Int) -> String)? = nil
    ) async throws -> [Int32: Int64] {
        var configuration = KafkaProducerConfiguration(bootstrapServers: [s.bootstrap])
        configuration.linger = .milliseconds(1)
        let producer = try KafkaProducer(configuration: configuration)
        let start = ContinuousClock.now
        // Paced runs produce small batches every 5 ms; the produce time is taken per event.
        let batch = rate.map { max(1, $0 / 200) } ?? 500
        var ends: [Int32: Int64] = [:]
        for first in stride(from: 0, to: count, by: batch) {
            if let rate {
                let due = start + .microseconds(Int64(first) * 1_000_000 / Int64(rate))
                if due > .now { try await Task.sleep(until: due) }
            }
            let reports = try await withThrowingTaskGroup(of: KafkaDeliveryReport.self) { group in
                for i in first..<min(first + batch, count) {
                    let sentAt = Int64(Date().timeIntervalSince1970 * 1_000_000)
                    let value =
                        event?(i)
                        ?? #"{"type":"user.welcome","id":"e\#(i)","user":{"first_name":"User \#(i)","fcm_token":"bench-token-\#(i)-abcdefghijklmnopqrstuvwxyz0123456789"},"sent_at_us":"\#(sentAt)"}"#
                    let k = key?(i) ?? "k\(i)"
                    group.addTask { try await producer.send(KafkaProducerRecord(topic: s.topic, key: Array(k.utf8), value: Array(value.utf8))) }
                }
                return try await group.reduce(into: [KafkaDeliveryReport]()) { $0.append($1) }
            }
            for r in reports { ends[r.partition] = max(ends[r.partition] ?? 0, r.offset + 1) }
        }
        await producer.close()
        return ends
    }

    static func waitUntilCommitted(_ s: Setup, ends: [Int32: Int64]) async throws -> Bool {
        try await withGroupAdmin(s) { admin in
            for _ in 0..<100 {
                let have = try await committed(s, partitions: Array(ends.keys), asking: admin)
                if have.allSatisfy({ ends[$0.key] == $0.value }) { return true }
                try await Task.sleep(for: .milliseconds(100))
            }
            return false
        }
    }

    /// The offsets the setup's group has committed on `partitions` of its topic.
    static func committed(_ s: Setup, partitions: [Int32]) async throws -> [Int32: Int64] {
        try await withGroupAdmin(s) { try await committed(s, partitions: partitions, asking: $0) }
    }

    /// Runs `body` with a consumer of the setup's group that only asks for its commits (it
    /// subscribes to nothing), closed when `body` ends.
    private static func withGroupAdmin<T>(_ s: Setup, _ body: (KafkaConsumer) async throws -> T) async throws -> T {
        try await KafkaConsumer.withConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: [s.bootstrap], groupID: s.group), body)
    }

    private static func committed(_ s: Setup, partitions: [Int32], asking admin: KafkaConsumer) async throws -> [Int32: Int64] {
        let have = try await admin.committed(partitions.map { TopicPartition(topic: s.topic, partition: $0) })
        return Dictionary(have.map { ($0.partition, $0.offset.rawValue) }, uniquingKeysWith: max)
    }
}

extension WorkerProcess {
    static func start(_ s: EndToEndBenchmark.Setup) throws -> WorkerProcess {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-bench-worker-\(UUID().uuidString).log").path
        return try start(executable: s.worker, config: s.config, port: s.metricsPort, log: log)
    }

    /// Starts a worker and waits until it holds its partitions (and 2 s more): events produced
    /// earlier would wait for the group's first rebalance, and that wait is not what a
    /// fixed-rate run measures.
    static func startConsuming(_ s: EndToEndBenchmark.Setup) async throws -> WorkerProcess {
        let worker = try start(s)
        do {
            let joined = ContinuousClock.now + .seconds(120)
            while !worker.readinessBody().hasPrefix("consuming"), ContinuousClock.now < joined {
                try await Task.sleep(for: .milliseconds(100))
            }
            try await Task.sleep(for: .seconds(2))
        } catch {
            worker.stop()
            throw error
        }
        return worker
    }

    func readinessBody() -> String { (try? get("/readyz").body) ?? "" }

    func logTail() -> String { String(output.suffix(1500)) }

    func stop() {
        process.terminate(timeout: .seconds(40))
        try? FileManager.default.removeItem(atPath: log)
    }
}

extension EndToEndBenchmark {
    static let mapping = """
        version: 1
        events:
          user.welcome:
            target:
              token: {field: /user/fcm_token}
            title:
              key: welcome_title
              args: [{field: /user/first_name}]
            replace_id: {from: event_id}
            data:
              sent_at_us: {field: /sent_at_us}
        """

    /// Writes the mapping and a worker config into `directory`; returns the setup.
    /// `maxSendsPerSecond`: the worker's `fcm.max_sends_per_second` (none by default); `outcomes`:
    /// its `topics.outcomes` (none by default); `tracingRatio`: tracing on, spans to the stub's
    /// `/v1/traces`, this `tracing.sample_ratio` (off by default); `mapping`: the mapping file's text.
    static func prepare(
        directory: String, bootstrap: String, topic: String, worker: String,
        endpoint: String, caFile: String, serviceAccount: String, group: String = "pushbridge-bench",
        maxSendsPerSecond: Int? = nil, outcomes: String? = nil, tracingRatio: Double? = nil, mapping: String = mapping, sections: String = ""
    ) throws -> Setup {
        let port = try FreePort.next()
        try mapping.write(toFile: "\(directory)/bench-mapping.yaml", atomically: true, encoding: .utf8)
        let config = """
            kafka:
              brokers: [\(bootstrap)]
              group: \(group)
              topics: [\(topic)]
              # tansu 0.6 holds every Fetch for up to fetch.wait.max.ms even when data is there
              # (Kafka answers once fetch.min.bytes=1 is met): 500 ms by default, which alone
              # put p50 at 120 ms and p99 at 260 ms at 1,000 events/s (docs/benchmarks.md).
              properties: {fetch.wait.max.ms: "10"}
              # tansu 0.6 holds a group's first join for about half the session timeout: 22 s of
              # every worker start at the default 45 s (brokers.md). With real Kafka leave it.
              session_timeout_ms: 6000
            mappings: [bench-mapping.yaml]
            fcm: {service_account: \(serviceAccount), endpoint: "\(endpoint)", ca_file: \(caFile)\(maxSendsPerSecond.map { ", max_sends_per_second: \($0)" } ?? "")}
            topics: {dead_letter: bench-dead-letter, token_invalidation: bench-invalidations\(outcomes.map { ", outcomes: \($0)" } ?? "")}
            http: {listen: "127.0.0.1:\(port)"}
            log: {level: warning}
            \(tracingRatio.map { "tracing: {endpoint: \"\(endpoint)\", ca_file: \(caFile), sample_ratio: \($0)}" } ?? "")
            \(sections)
            """
        let path = "\(directory)/bench-config-\(port).yaml"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        return Setup(bootstrap: bootstrap, topic: topic, worker: worker, config: path, metricsPort: port, group: group)
    }
}
