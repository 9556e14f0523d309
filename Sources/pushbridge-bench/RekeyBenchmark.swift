import Foundation
import Kafka
import ProcessHarness
import Rules
import Synchronization
import Threading

/// The spike of issue 55's plan step 9 (docs/design/per-user-rules.md §5.2, §7): what the
/// re-key hop and the changelog facts of caps and deduplication cost a worker, before they are
/// built. Three phases on one broker, each timed by this process's CPU (and the broker's, when
/// its PID is given), per event:
///
/// 1. **source**: a group consumer reads the source topic: what a worker pays today.
/// 2. **stage 1**: the same read, and each record produced to `by-subject`, keyed by its user,
///    with the source's coordinates as headers; acknowledged before it counts as done.
/// 3. **stage 2**: a group consumer reads `by-subject`; for each record a `reserved` fact
///    (the codec's binary encoding) is produced to the changelog partition of the record's
///    partition and acknowledged, then its `sent` fact; a tail consumer reads the changelog
///    back meanwhile (the owner's read-back), and the time from a reservation to its read-back
///    is the latency a capped push would wait.
///
/// The worker's added cost of a stateful event is stage 1 + stage 2 − source. No FCM sends, no
/// mapping: those are the same with or without the hop. Stages 1 and 2 run twice: with a task
/// and an awaited `send` per record, and with `send(_:onDelivery:)` (no task, no continuation).
enum RekeyBenchmark {
    struct Topics {
        var source: String
        var bySubject: String
        var changelog: String
    }

    static func run(bootstrap: String, topics: Topics, events: Int, users: Int, brokerPID: String?) async throws -> [(name: String, value: Double)] {
        try await produceSource(bootstrap: bootstrap, topic: topics.source, events: events, users: users)
        let meter = Meter(brokerPID: brokerPID)

        let source = try await meter.measure { try await consume(bootstrap: bootstrap, topic: topics.source, events: events, meter: meter) { _ in } }

        let producer = try KafkaProducer(configuration: producerConfiguration(bootstrap))
        let stage1 = try await meter.measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var inFlight = 0
                try await consume(bootstrap: bootstrap, topic: topics.source, events: events, meter: meter) { message in
                    if inFlight >= 5_000 {
                        try await group.next()
                        inFlight -= 1
                    }
                    inFlight += 1
                    group.addTask { _ = try await producer.send(rekeyed(message, to: topics.bySubject)) }
                }
                try await group.waitForAll()
            }
        }

        let readBack = ReadBack()
        async let tail: Void = tailChangelog(bootstrap: bootstrap, topic: topics.changelog, facts: events * 2, readBack: readBack)
        let stage2 = try await meter.measure {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var inFlight = 0
                var index = 0
                try await consume(bootstrap: bootstrap, topic: topics.bySubject, events: events, meter: meter) { message in
                    if inFlight >= 2_000 {
                        try await group.next()
                        inFlight -= 1
                    }
                    inFlight += 1
                    index += 1
                    let n = index
                    group.addTask { try await record(message, index: n, changelog: topics.changelog, producer: producer) }
                }
                try await group.waitForAll()
            }
        }
        try await tail
        // The same two stages with ``KafkaProducer/send(_:onDelivery:)``: no task and no
        // continuation per record; the sent fact is produced from the reservation's callback.
        let stage1Callbacks = try await meter.measure {
            let window = Window(limit: 5_000)
            try await consume(bootstrap: bootstrap, topic: topics.source, events: events, meter: meter) { message in
                await window.enter()
                try producer.send(rekeyed(message, to: topics.bySubject), onDelivery: window.leave)
            }
            try await window.drain()
        }
        let stage2Callbacks = try await meter.measure {
            let window = Window(limit: 2_000)
            var index = 0
            try await consume(bootstrap: bootstrap, topic: topics.bySubject, events: events, meter: meter) { message in
                await window.enter()
                index += 1
                let (reserved, sent) = facts(message, index: index, changelog: topics.changelog)
                try producer.send(reserved) { result in
                    guard case .success = result else { return window.leave(result) }
                    do throws(KafkaError) { try producer.send(sent, onDelivery: window.leave) } catch { window.leave(.failure(error)) }
                }
            }
            try await window.drain()
        }
        await producer.close()

        let latencies = readBack.latencies.sorted()
        let per = { (seconds: Double) in seconds * 1e6 / Double(events) }
        return [
            ("rekey_source_consume_cpu_us_per_event", per(source.cpu)),
            ("rekey_stage1_cpu_us_per_event", per(stage1.cpu)),
            ("rekey_stage2_cpu_us_per_event", per(stage2.cpu)),
            ("rekey_added_cpu_us_per_event", per(stage1.cpu + stage2.cpu - source.cpu)),
            ("rekey_broker_source_cpu_us_per_event", per(source.brokerCPU)),
            ("rekey_broker_added_cpu_us_per_event", per(stage1.brokerCPU + stage2.brokerCPU - source.brokerCPU)),
            ("rekey_stage2_events_per_second", Double(events) / stage2.seconds),
            ("rekey_callbacks_stage1_cpu_us_per_event", per(stage1Callbacks.cpu)),
            ("rekey_callbacks_stage2_cpu_us_per_event", per(stage2Callbacks.cpu)),
            ("rekey_callbacks_added_cpu_us_per_event", per(stage1Callbacks.cpu + stage2Callbacks.cpu - source.cpu)),
            ("rekey_readback_p50_ms", percentile(latencies, 0.5)),
            ("rekey_readback_p99_ms", percentile(latencies, 0.99)),
        ]
    }

    struct Figures {
        var seconds: Double
        var cpu: Double
        var brokerCPU: Double
    }

    /// Wall time, this process's CPU and the broker's, from a phase's first record on (the group
    /// join before it is not the hop's cost).
    final class Meter: Sendable {
        let brokerPID: String?
        private let start = Mutex<(instant: ContinuousClock.Instant, cpu: Double, brokerCPU: Double)?>(nil)

        init(brokerPID: String?) { self.brokerPID = brokerPID }

        func brokerCPU() -> Double { brokerPID.map { procCPUSeconds(pid: $0) } ?? 0 }

        /// The first record of the phase is here (later calls change nothing).
        func mark() {
            let now = (ContinuousClock.now, procCPUSeconds(), brokerCPU())
            start.withLock { $0 = $0 ?? now }
        }

        func measure(_ body: () async throws -> Void) async throws -> Figures {
            start.withLock { $0 = nil }
            try await body()
            let end = (ContinuousClock.now, procCPUSeconds(), brokerCPU())
            guard let begin = start.withLock({ $0 }) else { throw BenchError("no record read") }
            return Figures(seconds: KafkaBenchmark.seconds(end.0 - begin.instant), cpu: end.1 - begin.cpu, brokerCPU: end.2 - begin.brokerCPU)
        }
    }

    /// Reads `events` records of `topic` in a new group, calling `each` in order.
    static func consume(bootstrap: String, topic: String, events: Int, meter: Meter, _ each: (KafkaMessage) async throws -> Void) async throws {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: [bootstrap], groupID: "rekey-\(UUID().uuidString.prefix(8))")
        configuration.sessionTimeout = .seconds(6)
        let consumer = try KafkaConsumer(configuration: configuration)
        try consumer.subscribe(topics: [topic])
        var count = 0
        for try await message in consumer.messages {
            if count == 0 { meter.mark() }
            try await each(message)
            count += 1
            if count == events { break }
        }
        await consumer.close()
    }

    /// The source record, keyed by its user (the value's first field here), to `topic`, with
    /// where it came from (design §5.3: value, headers and timestamp kept).
    static func rekeyed(_ message: KafkaMessage, to topic: String) -> KafkaProducerRecord {
        let user = Array(message.value.prefix(while: { $0 != UInt8(ascii: "|") }))
        let headers =
            message.headers + [
                KafkaHeader(name: "pushbridge-source-topic", value: Array(message.topic.utf8)),
                KafkaHeader(name: "pushbridge-source-partition", value: Array(String(message.partition).utf8)),
                KafkaHeader(name: "pushbridge-source-offset", value: Array(String(message.offset).utf8)),
            ]
        return KafkaProducerRecord(topic: topic, key: user, value: message.value, headers: headers, timestamp: message.timestamp?.milliseconds)
    }

    /// The owner's writes for one event: its reservation, acknowledged, then its outcome.
    static func record(_ message: KafkaMessage, index: Int, changelog: String, producer: KafkaProducer) async throws {
        let (reserved, sent) = facts(message, index: index, changelog: changelog)
        _ = try await producer.send(reserved)
        _ = try await producer.send(sent)
    }

    /// The `reserved` and `sent` facts of one event, to the changelog partition of its partition.
    static func facts(_ message: KafkaMessage, index: Int, changelog: String) -> (KafkaProducerRecord, KafkaProducerRecord) {
        let user = String(decoding: message.key ?? [], as: UTF8.self)
        let n = NotificationID(eventID: "\(message.partition)/\(message.offset)", mapping: "chat.message", subject: user)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let owner = "bench-worker:1:\(index % 997)"
        let reserved = NotificationFact(
            notification: n, status: .reserved, attempt: 1, at: now, expires: now + 86_400_000, owner: owner,
            subject: CapSubject(user: user, category: "social", mapping: "chat.message", devices: [DeviceKey(target: "fid:\(user)-a")]))
        let sent = NotificationFact(
            notification: n, status: .sent, attempt: 1, at: now + 1, expires: now + 86_400_001, owner: owner,
            devices: [DevicePushID(notification: n, target: "fid:\(user)-a")])
        let key = n.bytes
        return (
            KafkaProducerRecord(topic: changelog, partition: message.partition, key: key, value: FactCodec.encode(.notification(reserved))),
            KafkaProducerRecord(topic: changelog, partition: message.partition, key: key, value: FactCodec.encode(.notification(sent)))
        )
    }

    /// Records in flight without a task each: ``enter()`` waits for room, a delivery callback
    /// ``leave(_:)``s, ``drain()`` waits for the last and throws the first failure.
    final class Window: Sendable {
        let limit: Int
        private let open = Atomic<Int>(0)
        private let changed = ChangeSignal()
        private let failure = Mutex<KafkaError?>(nil)

        init(limit: Int) { self.limit = limit }

        /// Waits, when the window is full, until half of it is free: one wake-up per half a
        /// window of deliveries, not one per record.
        func enter() async {
            if open.load(ordering: .acquiring) >= limit {
                _ = await changed.wait { open.load(ordering: .acquiring) <= limit / 2 }
            }
            open.add(1, ordering: .acquiringAndReleasing)
        }

        @Sendable func leave(_ result: Result<KafkaDeliveryReport, KafkaError>) {
            if case .failure(let error) = result { failure.withLock { $0 = $0 ?? error } }
            let left = open.subtract(1, ordering: .acquiringAndReleasing).newValue
            if left == limit / 2 || left == 0 { changed.notify() }
        }

        func drain() async throws {
            _ = await changed.wait { open.load(ordering: .acquiring) == 0 }
            if let error = failure.withLock({ $0 }) { throw error }
        }
    }

    /// Milliseconds from each reservation's `at` to its read-back by the tail.
    final class ReadBack: Sendable {
        private let state = Mutex<[Double]>([])
        func add(_ ms: Double) { state.withLock { $0.append(ms) } }
        var latencies: [Double] { state.withLock { $0 } }
    }

    /// Reads the changelog from its start until `facts` facts were read, decoding each.
    static func tailChangelog(bootstrap: String, topic: String, facts: Int, readBack: ReadBack) async throws {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: [bootstrap], groupID: "rekey-tail-\(UUID().uuidString.prefix(8))")
        configuration.sessionTimeout = .seconds(6)
        let consumer = try KafkaConsumer(configuration: configuration)
        try consumer.subscribe(topics: [topic])
        var count = 0
        for try await message in consumer.messages {
            if case .notification(let fact) = try FactCodec.decode(message.value), fact.status == .reserved {
                readBack.add(Date().timeIntervalSince1970 * 1000 - Double(fact.at))
            }
            count += 1
            if count == facts { break }
        }
        await consumer.close()
    }

    static func produceSource(bootstrap: String, topic: String, events: Int, users: Int) async throws {
        let producer = try KafkaProducer(configuration: producerConfiguration(bootstrap))
        let padding = String(repeating: "x", count: 200)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<events {
                if i >= 5_000 { try await group.next() }
                // Keyed by something other than the user (an order, a chat): the case the hop is for.
                let value = Array("user-\(i * 7919 % users)|{\"type\":\"chat.message\",\"id\":\"e\(i)\",\"body\":\"\(padding)\"}".utf8)
                group.addTask { _ = try await producer.send(KafkaProducerRecord(topic: topic, key: Array("chat-\(i)".utf8), value: value)) }
            }
            try await group.waitForAll()
        }
        await producer.close()
    }

    /// As the worker's record producer (`OutputRecords.producerConfiguration`): `acks=all`, not
    /// idempotent (design §5.3: facts merge as a lattice, so duplicates are harmless).
    static func producerConfiguration(_ bootstrap: String) -> KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration(bootstrapServers: [bootstrap])
        configuration.enableIdempotence = false
        configuration.linger = .milliseconds(5)
        configuration.properties["acks"] = "all"
        return configuration
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}
