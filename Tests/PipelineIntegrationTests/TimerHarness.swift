import Dates
import Foundation
import Kafka
import Logging
import Pipeline
import Synchronization

/// A timer topic on librdkafka's mock cluster, timer records written as a deferring worker
/// writes them (``TimerRecord/scheduling(_:subject:due:reason:push:level:ladder:now:)``), and
/// timer engines whose fires are recorded. Virtual time runs `rate` times the real one
/// (``TestClock``), so minutes of timers take seconds.
final class TimerHarness: Sendable {
    /// A fire the engine asked for: the timer, where it was read and the virtual time then.
    struct Fired: Sendable {
        let timer: TimerRecord
        let context: TimerContext
    }

    let cluster: KafkaMockCluster
    let topic = "timers"
    let deadLetterTopic = "timers-dead"
    /// The cancel topic (``TimerCancels``): an engine follows it when configured to.
    let cancelTopic = "timer-cancels"
    let layout: TimerLayout
    let clock: TestClock
    let producer: KafkaProducer
    let fires = Mutex<[Fired]>([])

    init(levels: Int = 8, buckets: Int = 2, rate: Double = 30, partitions: Int32? = nil) throws {
        cluster = try KafkaMockCluster(brokers: 1)
        layout = TimerLayout(ladder: TimerLadder(levels: levels), buckets: buckets)
        try cluster.createTopic(topic, partitions: partitions ?? layout.partitionCount)
        try cluster.createTopic(deadLetterTopic, partitions: 1)
        try cluster.createTopic(cancelTopic, partitions: 2)
        let real = RFC3339.nowMilliseconds()
        clock = TestClock(virtualStart: real, realAnchor: real, rate: rate)
        producer = try KafkaProducer(configuration: OutputRecords.producerConfiguration(brokers: [cluster.bootstrapServers], properties: [:]))
    }

    var now: Int64 { clock.nowMilliseconds() }

    /// The source event a timer of `user` carries.
    static func source(user: String, offset: Int64, now: Int64) -> KafkaMessage {
        KafkaMessage(
            topic: "events", partition: 0, offset: offset, key: Array(user.utf8), value: Array(#"{"type":"reminder","user":"\#(user)"}"#.utf8),
            headers: [KafkaHeader(name: "traceparent", string: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")],
            timestamp: KafkaTimestamp(milliseconds: now, kind: .createTime))
    }

    /// Writes the first record of a timer for `user` due `dueIn` virtual milliseconds from now.
    @discardableResult
    func schedule(user: String, dueIn: Int64, offset: Int64) async throws -> TimerRecord {
        let now = self.now
        let due = now + dueIn
        let level = layout.ladder.level(remainingMilliseconds: dueIn) ?? 0
        let timer = TimerRecord.scheduling(
            Self.source(user: user, offset: offset, now: now), subject: Array(user.utf8), due: due, reason: .sendAt, level: level,
            ladder: layout.ladder,
            now: now)
        _ = try await producer.send(
            OutputRecords.timer(timer, topic: topic, partition: layout.partition(key: timer.key, level: level), nowMilliseconds: now))
        return timer
    }

    /// A timer engine in `group`; `accept` says whether a fire is done (recorded either way).
    func engine(
        group: String, accept: @escaping @Sendable (TimerRecord) -> Bool = { _ in true }, metrics: PipelineMetrics = PipelineMetrics(),
        configure: (inout TimerPipeline.Configuration) -> Void = { _ in }
    ) throws -> TimerPipeline {
        var logger = Logger(label: "timer-test")
        logger.logLevel = .error
        var consumer = KafkaConsumerConfiguration(bootstrapServers: [cluster.bootstrapServers], groupID: group)
        consumer.sessionTimeout = .seconds(6)
        consumer.heartbeatInterval = .milliseconds(500)
        var configuration = TimerPipeline.Configuration(consumer: consumer, topic: topic)
        configuration.layout = layout
        configuration.clock = clock
        configuration.engine.commitInterval = .milliseconds(200)
        configuration.deadLetterTopic = deadLetterTopic
        configure(&configuration)
        return try TimerPipeline(configuration: configuration, producer: producer, metrics: metrics, logger: logger) {
            [self] timer, context in
            fires.withLock { $0.append(Fired(timer: timer, context: context)) }
            return accept(timer)
        }
    }

    var fired: [Fired] { fires.withLock { $0 } }

    /// Writes `cancel` to the cancel topic, as `pushbridge timers cancel` does.
    func cancel(_ cancel: TimerCancel) async throws {
        _ = try await producer.send(cancel.record(topic: cancelTopic))
    }

    /// Returns once `engine` reads (a timer due in a virtual second fired and everything is
    /// committed), and forgets that fire: a group join and the first fetch take seconds, which
    /// are minutes of virtual time, so timers are scheduled after it.
    func warmUp(_ engine: TimerPipeline, group: String) async throws -> Bool {
        let warmUp = try await schedule(user: "warm-up", dueIn: 1_000, offset: 999)
        let fired = try await eventually(.seconds(180)) { self.fired.contains { $0.timer.id == warmUp.id } }
        let committed = try await eventually { try await committedAll(group: group) }
        fires.withLock { $0.removeAll { $0.timer.id == warmUp.id } }
        return fired && committed
    }

    /// Every partition of the timer topic.
    var partitions: [TopicPartition] { (0..<layout.partitionCount).map { TopicPartition(topic: topic, partition: $0) } }

    /// The group's committed offsets (partitions without one left out).
    func committed(group: String) async throws -> [Int32: Int64] {
        let admin = try KafkaConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: [cluster.bootstrapServers], groupID: group))
        let offsets = try await admin.committed(partitions)
        await admin.close()
        var result: [Int32: Int64] = [:]
        for o in offsets where o.offset.isConcrete { result[o.partition] = o.offset.rawValue }
        return result
    }

    /// Each partition's end: the records written to it (first writes, forwards, anything else).
    func ends() async throws -> [Int32: Int64] {
        let admin = try KafkaConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: [cluster.bootstrapServers], groupID: nil))
        var result: [Int32: Int64] = [:]
        for p in partitions {
            let high = try await admin.watermarks(for: p).high
            if high > 0 { result[p.partition] = high }
        }
        await admin.close()
        return result
    }

    /// Whether the group committed every record of the topic.
    func committedAll(group: String) async throws -> Bool {
        let (have, want) = (try await committed(group: group), try await ends())
        return want.allSatisfy { have[$0.key] == $0.value }
    }

    /// Waits until `condition` holds (true), or `timeout` passes (false).
    func eventually(_ timeout: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return try await condition()
    }

    func stop() async {
        await producer.close()
    }
}
