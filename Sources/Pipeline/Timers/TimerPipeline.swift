import Dates
import Kafka
import Logging

/// The timer engine (issue 56 design §2.2–2.4): a member of the timer topic's own consumer
/// group that holds each record it reads until its release, then forwards it to the level of
/// its remaining time or fires it.
///
/// ```swift
/// let timers = try TimerPipeline(configuration: c, producer: p, metrics: m, logger: log) { timer, context in
///     await send(timer.sourceMessage)        // true: done, commit past it
/// }
/// try await timers.run()                     // until stop(), or the consumer ends
/// ```
///
/// A ``DeliveryEngine`` runs it as it runs a ``Pipeline``: the reader admits each record into a
/// ``DueGate`` (per partition, in offset order, until ``TimerLadder/wake(due:release:)``), and
/// the ``PartitionTable`` holds a partition (the consumer's pause keeps what librdkafka fetched)
/// while `window` of its records are not done. One release loop sleeps until the gate's next
/// wake or a signal, and hands ripe records to the engine's runners: **forward** (written to
/// the next level's partition with ``OutputRecords/timer(_:topic:partition:nowMilliseconds:)``,
/// done when Kafka acknowledges it) or **fire** (the caller's ``Fire``, done when it says so).
/// Done records are committed contiguously, as events are. A revoke gives up waiting records at
/// once and drains only begun forwards and fires; the next owner reads the rest again.
///
/// `pushbridge run` starts one when a mapping has `send_at` or quiet hours' `outside: defer`
/// (`Jobs/Worker+Timers.swift`), its fire ``EventProcessor/fire(_:)``.
public final class TimerPipeline: Sendable {
    public struct Configuration: Sendable {
        /// The consumer, limits, commits and timeouts, as a pipeline's: `consumer` in the timer
        /// group (a worker's: `<kafka.group>.timers`), `topics` the timer topic alone,
        /// `limits.partitionBuffer` the records of one partition not done before it is held
        /// (64; not a config key yet), `limits.maxEventsInFlight` those of all partitions
        /// (20,000), `maxEventsRunning` the forwards and fires under way at once (1,000),
        /// `revokeTimeout` and `shutdownTimeout` what begun ones may take. Its project quotas
        /// and Live Activity order are not used.
        public var engine: Pipeline.Configuration
        public var layout = TimerLayout()
        /// Where records that are no timer go (`malformed_timer`, `unknown_timer_version`);
        /// nil: they are logged and skipped.
        public var deadLetterTopic: String?
        /// When timers are due: the system's clock, or a test's.
        public var clock: any WallClock = SystemWallClock()
        /// The cancel topic (`timers.cancels`), followed from its start (``TimerCancels``); nil:
        /// nothing is cancelled.
        public var cancelTopic: String?

        /// The timer topic (`timers.topic`): it must have `layout.partitionCount` partitions.
        public var topic: String { engine.topics[0] }

        public init(consumer: KafkaConsumerConfiguration, topic: String) {
            engine = Pipeline.Configuration(consumer: consumer, topics: [topic])
            engine.limits = PartitionTable.Limits(maxEventsInFlight: 20_000, partitionBuffer: 64)
            engine.maxEventsRunning = 1_000
        }
    }

    /// Sends a due timer's push (``TimerRecord/sourceMessage`` rendered again): true when it is
    /// done (sent, withheld or dead-lettered: committed past); false leaves the record
    /// unfinished, never committed past, read again after a rebalance or restart.
    public typealias Fire = @Sendable (TimerRecord, TimerContext) async -> Bool

    public let configuration: Configuration
    let producer: any RecordProducing
    let fire: Fire
    let metrics: PipelineMetrics
    let logger: Logger
    let failures: LogSummary
    let coordinator: PipelineCoordinator
    let shelf: TimerShelf
    let consumer: any MessageSource
    /// What `pushbridge timers cancel` wrote, when a cancel topic is configured.
    let cancels: TimerCancels?
    private let engine: DeliveryEngine

    /// A timer engine reading with a ``KafkaConsumer`` in the group of `configuration.engine.consumer`.
    public convenience init(
        configuration: Configuration, producer: any RecordProducing, metrics: PipelineMetrics, logger: Logger, logs: KafkaLogs? = nil,
        fire: @escaping Fire
    ) throws(KafkaError) {
        var consumerConfiguration = configuration.engine.consumer
        for (key, value) in Self.consumerDefaults where consumerConfiguration.properties[key] == nil {
            consumerConfiguration.properties[key] = value
        }
        // Whatever `kafka.properties` says: a new timer group (a first deploy, offsets expired)
        // that started at the end would skip every timer already written.
        consumerConfiguration.properties["auto.offset.reset"] = "earliest"
        let logs = logs ?? KafkaLogs(logger: logger)
        try self.init(configuration: configuration, producer: producer, metrics: metrics, logger: logger, fire: fire) { handler throws(KafkaError) in
            try KafkaConsumer(
                configuration: consumerConfiguration, rebalanceHandler: handler, errorHandler: logs.errorHandler, logHandler: logs.lineHandler)
        }
    }

    /// A timer engine reading from the source `makeSource` returns for the rebalance handler.
    public init(
        configuration: Configuration, producer: any RecordProducing, metrics: PipelineMetrics, logger: Logger, fire: @escaping Fire,
        source makeSource: (KafkaRebalanceHandler) throws(KafkaError) -> any MessageSource
    ) throws(KafkaError) {
        self.configuration = configuration
        self.producer = producer
        self.fire = fire
        self.metrics = metrics
        self.logger = logger
        cancels = configuration.cancelTopic.map {
            TimerCancels(topic: $0, consumer: configuration.engine.consumer, clock: configuration.clock, logger: logger)
        }
        let failures = LogSummary(logger: logger)
        self.failures = failures
        let engineConfiguration = configuration.engine
        var limits = engineConfiguration.limits
        limits.maxUncommittedEvents = limits.maxEventsInFlight + max(1, engineConfiguration.commitEveryEvents)
        let coordinator = PipelineCoordinator(
            limits: limits, withOffsetMap: engineConfiguration.offsetMap, commitEveryEvents: engineConfiguration.commitEveryEvents)
        self.coordinator = coordinator
        // A partition is held at `partitionBuffer` records not done, but what the consumer
        // handed over before the pause still comes: at most its buffer.
        let shelf = TimerShelf(
            topic: configuration.topic, window: limits.partitionBuffer + engineConfiguration.consumer.messageBufferCapacity,
            drained: coordinator.drained)
        self.shelf = shelf
        let maxRunning = max(1, engineConfiguration.maxEventsRunning)
        engine = DeliveryEngine(
            maxRunners: maxRunning, runnerLimit: { waiting in min(maxRunning, waiting + Pipeline.beginningRunners) },
            shutdownTimeout: engineConfiguration.shutdownTimeout)
        let handlers = RebalanceHandlers(
            coordinator: coordinator, configuration: engineConfiguration, sender: nil, metrics: metrics, logger: logger, failures: failures,
            tracer: nil, waiting: shelf, countsPartitions: false)
        consumer = try makeSource(handlers.handler)
        handlers.consumer.withLock { $0 = consumer }
    }

    /// librdkafka properties the timer consumer sets unless the configuration does (design
    /// §2.2): little fetched ahead per held partition and per fetch (a held partition's answer
    /// already under way is kept; 1 MB a fetch holds the memory with 1M timers pending within
    /// 10 MB of 10k, `bench.sh timers-pending`, with no change to lateness), and a short fetch
    /// wait (tansu holds a Fetch for `fetch.wait.max.ms` even with data). A new group reads the
    /// topic from its start (``KafkaConsumerConfiguration/autoOffsetReset``'s default).
    static var consumerDefaults: [String: String] {
        var defaults = [
            "queued.min.messages": "100", "max.partition.fetch.bytes": "262144", "fetch.max.bytes": "1048576", "fetch.wait.max.ms": "100",
        ]
        if KafkaConsumer.librdkafkaAccepts(property: "fetch.queue.backoff.ms", value: "10") { defaults["fetch.queue.backoff.ms"] = "10" }
        return defaults
    }

    /// The partitions this member holds.
    public var assignment: Set<TopicPartition> { consumer.assignment }

    /// The offsets the broker acknowledged as committed by this member, per partition it holds.
    public var committedOffsets: [TopicPartition: Int64] { coordinator.committedOffsets }

    /// Records read and waiting for their release.
    public var waiting: Int { shelf.count }

    /// Stops reading; begun forwards and fires finish (up to the shutdown timeout), waiting
    /// records are given up, what is done is committed, and the member leaves the group.
    public func stop() { engine.stop() }

    /// Checks the topic's partition count, subscribes, and runs until ``stop()`` or the end of
    /// the consumer.
    /// - Throws: ``Pipeline/Failure`` when the topic cannot be read or its partition count is not
    ///   the layout's (levels × buckets: changing `timers.levels` would move every record).
    public func run() async throws {
        try await checkTopic()
        let topic = configuration.topic
        try consumer.subscribe(topics: [topic])
        logger.info("reading timers", metadata: ["topic": "\(topic)"])
        do {
            try await run(reading: consumer)
        } catch {
            throw Pipeline.Failure(description: "the timer engine ran already; make a new one")
        }
        if let failure = engine.failure { throw Pipeline.Failure(description: failure) }
    }

    /// Checks that the timer topic exists with `layout.partitionCount` partitions: a worker
    /// does before it takes any event, so that none is deferred to a topic it will refuse.
    /// - Throws: ``Pipeline/Failure`` naming the count (the consumer is closed then).
    public func checkTopic() async throws {
        let topic = configuration.topic
        let expected = Int(configuration.layout.partitionCount)
        let count: Int
        do {
            count = try await consumer.partitionCount(of: topic)
        } catch {
            await consumer.close()
            throw Pipeline.Failure(description: "cannot read the partitions of the timer topic \(topic): \(error)")
        }
        guard count == expected else {
            await consumer.close()
            throw Pipeline.Failure(
                description:
                    "the timer topic \(topic) has \(count) partitions; timers.levels × timers.buckets = \(expected) (create it with that many)")
        }
    }

    private func run(reading source: some MessageSource) async throws(DeliveryEngine.AlreadyRan) {
        try await engine.run(TimerWork(timers: self, source: source))
    }

    func fail(_ reason: String) { engine.fail(reason) }

    /// Commits what is done in `partitions` (all if nil) and waits for the broker.
    @discardableResult
    func commitNow(_ partitions: [TopicPartition]?) async -> PipelineCoordinator.CommitResult {
        await coordinator.commit(partitions, through: consumer, metrics: metrics, log: failures)
    }
}

/// Where and when a timer fires: the copy of it that was read, and the wall clock then.
public struct TimerContext: Sendable, Equatable {
    /// When the fire began (UTC milliseconds, not before the timer's due time; earlier for a
    /// cancelled one, which is "fired" when it is released).
    public var now: Int64
    /// The level partition and offset of the copy read in the timer topic.
    public var partition: Int32
    public var offset: Int64
    /// The cancellation that covers it (``TimerCancels``): not to be sent, only accounted for.
    public var cancelled: TimerCancel?

    public init(now: Int64, partition: Int32, offset: Int64, cancelled: TimerCancel? = nil) {
        (self.now, self.partition, self.offset, self.cancelled) = (now, partition, offset, cancelled)
    }
}
