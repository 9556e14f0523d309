import Dates
import Foundation
import Kafka
import Logging
import Pipeline
import ProcessHarness
import Synchronization
import Threading

/// Plan step 4 of deferred delivery (docs/design/deferred-delivery.md): what the timer engine
/// costs, on timer records written directly as a deferring worker writes them, before `send_at`
/// is built on it. On a broker with the timer topic (`levels` × `buckets` partitions):
///
/// 1. `timers` records are written, due at `rate` per second from `lead` seconds on (each at the
///    level of its remaining time, as ``TimerRecord/scheduling(_:subject:due:reason:push:level:ladder:now:)``).
/// 2. A ``TimerPipeline`` in a new group holds, forwards and fires them on the real clock until
///    every one has fired; each fire is accepted at once (the send is not part of it).
///
/// Figures: the worker's CPU per timer (reads, holds, forwards, fires, commits) and per hop, the
/// records per timer, the record's bytes, lateness (fire − due) percentiles, and the resident
/// memory at the end.
enum TimersBenchmark {
    struct Options {
        var bootstrap: String
        var topic: String
        var timers = 50_000
        var rate = 5_000.0
        var lead = 20.0
        var levels = 8
        var buckets = 2
        /// librdkafka properties for the engine's consumer, over its defaults (`TIMERS_BENCH_CONSUMER_PROPERTIES`).
        var consumerProperties: [String: String] = [:]
    }

    static func run(_ o: Options) async throws -> [(name: String, value: Double)] {
        let layout = TimerLayout(ladder: TimerLadder(levels: o.levels), buckets: o.buckets)
        let producer = try KafkaProducer(configuration: OutputRecords.producerConfiguration(brokers: [o.bootstrap], properties: [:]))
        let start = RFC3339.nowMilliseconds()
        let bytes = try await schedule(o, layout: layout, producer: producer, now: start)
        let firstEnds = try await endSum(o, layout: layout)

        var logger = Logger(label: "bench-timers")
        logger.logLevel = .error
        var consumer = KafkaConsumerConfiguration(bootstrapServers: [o.bootstrap], groupID: "bench-timers-\(UUID().uuidString.prefix(8))")
        consumer.sessionTimeout = .seconds(6)
        consumer.properties = o.consumerProperties
        var configuration = TimerPipeline.Configuration(consumer: consumer, topic: o.topic)
        configuration.layout = layout
        let lateness = Lateness()
        let allFired = ChangeSignal()
        let engine = try TimerPipeline(configuration: configuration, producer: producer, metrics: PipelineMetrics(), logger: logger) {
            timer, context in
            let count = lateness.values.withLock {
                $0.append(context.now - timer.due)
                return $0.count
            }
            if count == o.timers { allFired.notify() }
            return true
        }
        let cpu = procCPUSeconds()
        let finished: Bool = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await engine.run()
                return false
            }
            group.addTask {
                let deadline = ContinuousClock.now + .seconds(o.lead + Double(o.timers) / o.rate + 120)
                return await allFired.wait(until: deadline) { lateness.values.withLock { $0.count } >= o.timers }
            }
            let finished = try await group.next() ?? false
            engine.stop()
            try await group.waitForAll()
            return finished
        }
        let cpuSeconds = procCPUSeconds() - cpu
        let rss = procStatusMegabytes("VmHWM")
        await producer.close()
        let late = lateness.values.withLock { $0 }.sorted()
        guard finished, late.count == o.timers else { throw BenchError("\(late.count) of \(o.timers) timers fired") }
        let records = Double(try await endSum(o, layout: layout))
        let hops = records - Double(firstEnds)
        return [
            ("timers_fired", Double(o.timers)),
            ("timers_records_per_timer", records / Double(o.timers)),
            ("timers_cpu_us_per_timer", cpuSeconds / Double(o.timers) * 1_000_000),
            ("timers_cpu_us_per_record", cpuSeconds / records * 1_000_000),
            ("timers_forwards", hops),
            ("timers_record_bytes", bytes),
            ("timers_lateness_p50_ms", Double(RekeyBenchmark.percentile(late.map(Double.init), 0.5))),
            ("timers_lateness_p99_ms", Double(RekeyBenchmark.percentile(late.map(Double.init), 0.99))),
            ("timers_lateness_max_ms", Double(late.last ?? 0)),
            ("timers_peak_rss_mb", rss),
        ]
    }

    /// Writes the timers, due at `rate` per second from `lead` on: the average record's bytes
    /// (value, key and headers).
    static func schedule(_ o: Options, layout: TimerLayout, producer: KafkaProducer, now: Int64) async throws -> Double {
        var bytes = 0
        try await withThrowingTaskGroup(of: Void.self) { group in
            var inFlight = 0
            for i in 0..<o.timers {
                let due = now + Int64((o.lead + Double(i) / o.rate) * 1_000)
                let record = timerRecord(i, due: due, topic: o.topic, layout: layout, now: now)
                bytes += record.value.count + (record.key?.count ?? 0) + record.headers.reduce(0) { $0 + $1.name.utf8.count + ($1.value?.count ?? 0) }
                if inFlight >= 5_000 {
                    try await group.next()
                    inFlight -= 1
                }
                inFlight += 1
                group.addTask { _ = try await producer.send(record) }
            }
            try await group.waitForAll()
        }
        return Double(bytes) / Double(max(o.timers, 1))
    }

    /// Timer `i` of a benchmark as a deferring worker writes it at `now`: a 90-byte event of one
    /// of 10,000 users, with a `traceparent`, due at `due`, at the level of its remaining time.
    static func timerRecord(_ i: Int, due: Int64, topic: String, layout: TimerLayout, now: Int64) -> KafkaProducerRecord {
        let user = "user-\(i % 10_000)"
        let source = KafkaMessage(
            topic: "events", partition: Int32(i % 4), offset: Int64(i), key: Array(user.utf8),
            value: Array(#"{"type":"reminder","id":"e-\#(i)","user":"\#(user)","title":"Your order is ready"}"#.utf8),
            headers: [KafkaHeader(name: "traceparent", string: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")],
            timestamp: KafkaTimestamp(milliseconds: now, kind: .createTime))
        let level = layout.ladder.level(remainingMilliseconds: due - now) ?? 0
        let timer = TimerRecord.scheduling(
            source, subject: Array(user.utf8), due: due, reason: .sendAt, level: level, ladder: layout.ladder, now: now)
        return OutputRecords.timer(timer, topic: topic, partition: layout.partition(key: timer.key, level: level), nowMilliseconds: now)
    }

    /// The records in the timer topic: the sum of its partitions' ends.
    static func endSum(_ o: Options, layout: TimerLayout) async throws -> Int64 {
        let admin = try KafkaConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: [o.bootstrap], groupID: nil))
        var sum: Int64 = 0
        for p in 0..<layout.partitionCount { sum += try await admin.watermarks(for: TopicPartition(topic: o.topic, partition: p)).high }
        await admin.close()
        return sum
    }
}

/// Each fire's lateness (ms), as the engine's runners record them.
final class Lateness: Sendable {
    let values = Mutex<[Int64]>([])
}
