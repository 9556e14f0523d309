import Dates
import Foundation
import Kafka
import Logging
import Pipeline
import ProcessHarness

/// Issue 56's "1M pending timers with flat memory" (docs/design/deferred-delivery.md §7.4): the
/// resident memory of a timer engine whose topic holds N timers due hours ahead, for N = 10k,
/// 100k and 1M, each in a process and on a topic of its own (`scripts/bench.sh timers-pending`).
///
/// 1. ``write(_:)`` (`pushbridge-bench timers-write`, a process of its own, so that what writing
///    N records leaves in the allocator is not counted) writes N timer records as a deferring
///    worker writes them (``TimersBenchmark/timerRecord(_:due:topic:layout:now:)``), due
///    uniformly 1–8 h ahead, each at the level of its remaining time. With the default 18 levels
///    (1 s … 36.4 h) that is levels 11–14, released 34 min to 4.5 h after the write: nothing
///    moves while the engine is measured. (With the `timers` bench's 8 levels the top level
///    holds 128 s, and every record would be forwarded again every 128 s: no idle engine.)
/// 2. ``hold(_:)`` (`pushbridge-bench timers-pending`) starts a ``TimerPipeline`` in a new group
///    and waits until it has read what it will read: its records waiting
///    (``TimerPipeline/waiting``, the `pushbridge_timers_waiting` gauge) are more than none and
///    have not changed for `settle` seconds. The engine holds each partition once 64 of its
///    records wait (librdkafka keeps what it fetched and fetches no more), so the rest stays in
///    Kafka. Then the process's CPU is measured over `idle` seconds, and VmRSS (current, not the
///    peak) read at the end. No timer fires and none is forwarded meanwhile (checked).
///
/// Figures (suffix `_pending_10k` etc.): the write's seconds, records per second and CPU per
/// record; the time from the engine's start to its last record read (the group join included)
/// and from its first; the records waiting in the engine; VmRSS before the engine started and
/// with it idle; its CPU while idle (% of a core) and the broker's, when its PID is given.
/// What the process holds then, besides the waiting records: the fetches librdkafka made before
/// the holds took effect (docs/benchmarks.md#many-timers-pending).
enum TimersPendingBenchmark {
    struct Options {
        var bootstrap: String
        var topic: String
        var timers = 10_000
        var levels = 18
        var buckets = 2
        /// Seconds the waiting count must stay unchanged before the engine counts as idle.
        var settle = 5.0
        /// Seconds over which the idle engine's CPU is measured.
        var idle = 10.0
        var brokerPID: String?
        /// librdkafka properties for the engine's consumer (its own defaults otherwise), to try
        /// other fetch sizes.
        var consumerProperties: [String: String] = [:]

        var layout: TimerLayout { TimerLayout(ladder: TimerLadder(levels: levels), buckets: buckets) }

        /// `10k`, `100k`, `1m`: the figures' suffix.
        var label: String {
            if timers >= 1_000_000, timers % 1_000_000 == 0 { return "\(timers / 1_000_000)m" }
            if timers >= 1_000, timers % 1_000 == 0 { return "\(timers / 1_000)k" }
            return "\(timers)"
        }
    }

    /// Writes `o.timers` timer records due uniformly 1–8 h from now, with 20,000 in flight and a
    /// delivery callback each (no task per record), and waits until Kafka acknowledged them all
    /// (a failed delivery throws). The acknowledgements are the count: tansu answers high
    /// watermarks too low (docs/registry.md), so the topic's ends would not add up to N.
    static func write(_ o: Options) async throws -> [(name: String, value: Double)] {
        let layout = o.layout
        let producer = try KafkaProducer(configuration: OutputRecords.producerConfiguration(brokers: [o.bootstrap], properties: [:]))
        let now = RFC3339.nowMilliseconds()
        let started = ContinuousClock.now
        let cpu = procCPUSeconds()
        let window = RekeyBenchmark.Window(limit: 20_000)
        for i in 0..<o.timers {
            let record = TimersBenchmark.timerRecord(i, due: now + due(i), topic: o.topic, layout: layout, now: now)
            await window.enter()
            try producer.send(record, onDelivery: window.leave)
        }
        try await window.drain()
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        let cpuSeconds = procCPUSeconds() - cpu
        await producer.close()
        let suffix = "_pending_\(o.label)"
        return [
            ("timers_write_seconds" + suffix, seconds),
            ("timers_write_records_per_second" + suffix, Double(o.timers) / seconds),
            ("timers_write_cpu_us_per_record" + suffix, cpuSeconds / Double(o.timers) * 1_000_000),
        ]
    }

    /// Milliseconds from the write to timer `i`'s due time: 1 h + 7 h × frac(i × φ), uniform
    /// over 1–8 h and interleaved (neighbours are hours apart, as real deferrals are).
    static func due(_ i: Int) -> Int64 {
        let golden = 0.618_033_988_749_894_9
        let fraction = (Double(i) * golden).truncatingRemainder(dividingBy: 1)
        return 3_600_000 + Int64(fraction * 7 * 3_600_000)
    }

    /// Starts a timer engine on the topic ``write(_:)`` filled, waits until it is idle, and
    /// measures it (see the type's comment).
    static func hold(_ o: Options) async throws -> [(name: String, value: Double)] {
        let producer = try KafkaProducer(configuration: OutputRecords.producerConfiguration(brokers: [o.bootstrap], properties: [:]))
        var logger = Logger(label: "bench-timers-pending")
        logger.logLevel = .error
        var consumer = KafkaConsumerConfiguration(bootstrapServers: [o.bootstrap], groupID: "bench-timers-pending-\(UUID().uuidString.prefix(8))")
        consumer.sessionTimeout = .seconds(6)
        consumer.properties = o.consumerProperties
        var configuration = TimerPipeline.Configuration(consumer: consumer, topic: o.topic)
        configuration.layout = o.layout
        let fired = Lateness()  // none should fire: the first is due in an hour
        let engine = try TimerPipeline(configuration: configuration, producer: producer, metrics: PipelineMetrics(), logger: logger) {
            timer, context in
            fired.values.withLock { $0.append(context.now - timer.due) }
            return true
        }
        let rssBefore = procStatusMegabytes("VmRSS")
        let started = ContinuousClock.now
        let idle: Idle? = try await withThrowingTaskGroup(of: Idle?.self) { group in
            group.addTask {
                try await engine.run()
                return nil
            }
            group.addTask { try await measureIdle(engine, o, started: started) }
            let idle = try await group.next() ?? nil
            engine.stop()
            try await group.waitForAll()
            return idle
        }
        await producer.close()
        guard let idle else { throw BenchError("the timer engine ended before it was idle") }
        let fires = fired.values.withLock { $0.count }
        guard fires == 0, idle.waitingAfter == idle.waiting else {
            throw BenchError("the engine moved while idle: \(fires) fired, waiting \(idle.waiting) → \(idle.waitingAfter)")
        }
        let suffix = "_pending_\(o.label)"
        var figures: [(name: String, value: Double)] = [
            ("timers_ingest_seconds" + suffix, idle.ingestSeconds),
            ("timers_read_seconds" + suffix, idle.readSeconds),
            ("timers_waiting_in_memory" + suffix, Double(idle.waiting)),
            ("timers_rss_mb_before_engine" + suffix, rssBefore),
            ("timers_rss_mb" + suffix, idle.rss),
            ("timers_idle_cpu_percent" + suffix, idle.cpuSeconds / o.idle * 100),
        ]
        if let broker = idle.brokerCPUSeconds { figures.append(("timers_idle_broker_cpu_percent" + suffix, broker / o.idle * 100)) }
        return figures
    }

    /// The engine once idle.
    struct Idle: Sendable {
        /// From the engine's start to the last change of its waiting records.
        var ingestSeconds: Double
        /// From its first record waiting to that last change (the group join left out).
        var readSeconds: Double
        var waiting: Int
        /// After the idle window: the same, or something moved.
        var waitingAfter: Int
        /// VmRSS (MB) at the end of the idle window.
        var rss: Double
        var cpuSeconds: Double
        var brokerCPUSeconds: Double?
    }

    /// Waits until the engine's waiting records are more than none and unchanged for
    /// `o.settle` seconds (looked at every 100 ms; at most 10 minutes), then measures the
    /// process's and the broker's CPU over `o.idle` seconds and reads VmRSS.
    static func measureIdle(_ engine: TimerPipeline, _ o: Options, started: ContinuousClock.Instant) async throws -> Idle {
        var (last, changed, first) = (0, started, started)
        while true {
            try await Task.sleep(for: .milliseconds(100))
            let now = ContinuousClock.now
            let waiting = engine.waiting
            if last == 0, waiting > 0 { first = now }
            if waiting != last { (last, changed) = (waiting, now) }
            if last > 0, now - changed >= .seconds(o.settle) { break }
            guard now - started < .seconds(600) else { throw BenchError("the engine never settled (\(waiting) waiting)") }
        }
        let (cpu, broker) = (procCPUSeconds(), o.brokerPID.map { procCPUSeconds(pid: $0) })
        try await Task.sleep(for: .seconds(o.idle))
        let cpuSeconds = procCPUSeconds() - cpu
        let brokerSeconds = o.brokerPID.flatMap { pid in broker.map { procCPUSeconds(pid: pid) - $0 } }
        return Idle(
            ingestSeconds: (changed - started) / .seconds(1), readSeconds: (changed - first) / .seconds(1), waiting: last,
            waitingAfter: engine.waiting, rss: procStatusMegabytes("VmRSS"),
            cpuSeconds: cpuSeconds, brokerCPUSeconds: brokerSeconds)
    }
}
