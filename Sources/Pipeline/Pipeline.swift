import Kafka
import Logging
import Synchronization

/// Consume → map → send → commit after ack, for one member of a consumer group.
///
/// ```swift
/// let pipeline = try Pipeline(configuration: c, processor: processor, metrics: m, logger: log)
/// try await pipeline.run()      // until stop(), a fatal error, or the consumer ends
/// ```
///
/// Each admitted message waits in an ``EventQueue`` until one of the runner tasks takes it: it
/// begins the event's send and goes on to the next (``EventProcessor/begin(_:then:)``), or,
/// when the event must wait for something first, takes it to its end. Offsets are committed
/// per partition up to the first unfinished event (``PartitionTable``), on an interval and after
/// every N finished events, synchronously on revoke, and at the end. Partitions with too much
/// work in flight are paused and resumed as they drain.
public final class Pipeline: Sendable {
    public struct Configuration: Sendable {
        public var consumer: KafkaConsumerConfiguration
        public var topics: [String]
        /// Events in flight. `maxUncommittedEvents` is set from the others: `maxEventsInFlight`
        /// plus `commitEveryEvents`.
        public var limits = PartitionTable.Limits()
        /// Runner tasks at most. A few begin events (``Pipeline/beginningRunners``) and others
        /// start while events hold one as they wait (a schema to fetch, several sends, a retry),
        /// as many as the sender's ``PushSending/concurrencyLimit`` at most (the sends FCM's
        /// answer times call for); the other events in flight wait as plain values. The worker
        /// sets it to `delivery.max_sends_in_flight`.
        public var maxEventsRunning = 5_000
        public var commitInterval: Duration = .seconds(1)
        public var commitEveryEvents = 1_000
        /// Write which later offsets are done into the commit metadata, so a restart skips them.
        public var offsetMap = true
        /// How long a revoked partition's in-flight events may take before it is given up.
        public var revokeTimeout: Duration = .seconds(10)
        /// How long in-flight events may take after ``Pipeline/stop()``.
        public var shutdownTimeout: Duration = .seconds(30)
        /// Each Firebase project's send rate (by its name in `fcm.projects`), split across the
        /// group by the partitions each member holds (``ProjectQuotaShare``), set on the sender
        /// at every rebalance. A project not named here: no split.
        public var projectQuotas: [String: ProjectQuotaShare] = [:]
        /// One Live Activity push in flight per activity, in offset order, older waiting updates
        /// replaced by newer ones (``ActivityLanes``); false sends them as they come
        /// (`delivery.order_activities`).
        public var orderActivities = true

        public init(consumer: KafkaConsumerConfiguration, topics: [String]) {
            self.consumer = consumer
            self.topics = topics
        }
    }

    /// Why ``Pipeline/run()`` ended early.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public let configuration: Configuration
    let processor: EventProcessor
    let metrics: PipelineMetrics
    let logger: Logger
    /// Failures that repeat (commits, and the consumer's librdkafka lines), as incidents.
    let failures: LogSummary
    let coordinator: PipelineCoordinator
    let consumer: any MessageSource
    /// Live Activity pushes waiting for their activity's push in flight, and the order events
    /// were read in; used when ``ordersActivities``.
    let activityLanes = Mutex(ActivityLanes<ParkedActivityPush>())
    /// Some mapping drives a Live Activity, and `orderActivities` is on.
    let ordersActivities: Bool
    private let engine: DeliveryEngine

    /// Runners that begin events, beside those waiting on theirs: beginning one takes
    /// microseconds, and such a runner waits only while every send slot is taken.
    static let beginningRunners = 16

    /// A pipeline reading from a ``KafkaConsumer`` in the group of `configuration.consumer`.
    /// - Parameter logs: the process's Kafka lines (default: the processor's ``LogSummary``).
    public convenience init(
        configuration: Configuration, processor: EventProcessor, metrics: PipelineMetrics, logger: Logger, logs: KafkaLogs? = nil
    ) throws(KafkaError) {
        var consumerConfiguration = configuration.consumer
        for (key, value) in Self.consumerDefaults where consumerConfiguration.properties[key] == nil {
            consumerConfiguration.properties[key] = value
        }
        let logs = logs ?? KafkaLogs(summary: processor.failures)
        try self.init(configuration: configuration, processor: processor, metrics: metrics, logger: logger) { handler throws(KafkaError) in
            try KafkaConsumer(
                configuration: consumerConfiguration,
                rebalanceHandler: handler,
                errorHandler: logs.errorHandler,
                logHandler: logs.lineHandler)
        }
    }

    /// A pipeline reading from the source `makeSource` returns for the rebalance handler it is
    /// given (tests substitute a fake; `configuration.consumer` is not used then).
    public init(
        configuration: Configuration, processor: EventProcessor, metrics: PipelineMetrics, logger: Logger,
        source makeSource: (KafkaRebalanceHandler) throws(KafkaError) -> any MessageSource
    ) throws(KafkaError) {
        self.configuration = configuration
        self.processor = processor
        self.ordersActivities = configuration.orderActivities && processor.mappings.hasLiveActivities
        self.metrics = metrics
        self.logger = logger
        self.failures = processor.failures
        // What a crash can make the next owner send again: the events in flight plus those
        // finished since the last commit. Commits that fail must not let the second part grow.
        var limits = configuration.limits
        limits.maxUncommittedEvents = limits.maxEventsInFlight + max(1, configuration.commitEveryEvents)
        let coordinator = PipelineCoordinator(
            limits: limits, withOffsetMap: configuration.offsetMap,
            commitEveryEvents: configuration.commitEveryEvents)
        self.coordinator = coordinator
        let sender = processor.sender
        self.engine = DeliveryEngine(
            maxRunners: configuration.maxEventsRunning,
            runnerLimit: { waiting in min(sender.concurrencyLimit, waiting + Self.beginningRunners) },
            shutdownTimeout: configuration.shutdownTimeout)
        let engine = self.engine
        let handlers = RebalanceHandlers(
            coordinator: coordinator, configuration: configuration, sender: processor.sender, metrics: metrics, logger: logger,
            failures: processor.failures, tracer: processor.tracer, rules: processor.rules, failed: { engine.fail($0) })
        let consumer = try makeSource(handlers.handler)
        self.consumer = consumer
        handlers.consumer.withLock { $0 = consumer }
    }

    /// librdkafka properties the pipeline sets unless the configuration does.
    ///
    /// It fetches less ahead than librdkafka's defaults (64 MB, 100k messages per partition), so
    /// what was fetched before a pause stays small: memory stays flat. With so small a queue a
    /// partition crosses the threshold on almost every fetch, and librdkafka then waits
    /// `fetch.queue.backoff.ms` (default 1 s) before it fetches that partition again, which caps
    /// consumption far below what the worker sends; 10 ms lifts the cap (measured with tansu,
    /// docs/benchmarks.md). The property is new in librdkafka 2.1, so it is set only where the
    /// library takes it.
    static var consumerDefaults: [String: String] {
        var defaults = ["queued.max.messages.kbytes": "4096", "queued.min.messages": "1000"]
        if KafkaConsumer.librdkafkaAccepts(property: "fetch.queue.backoff.ms", value: "10") { defaults["fetch.queue.backoff.ms"] = "10" }
        return defaults
    }

    /// Whether ``run()`` is consuming (it holds an assignment, or is waiting for one).
    public var isRunning: Bool { engine.isReading }

    /// The partitions this worker holds.
    public var assignment: Set<TopicPartition> { consumer.assignment }

    /// The offsets the broker acknowledged as committed by this worker, per partition it holds.
    public var committedOffsets: [TopicPartition: Int64] { coordinator.committedOffsets }

    /// Asks ``run()`` to stop taking messages, finish what is in flight (up to
    /// ``Configuration/shutdownTimeout``), commit, and leave the group.
    public func stop() { engine.stop() }

    /// Subscribes and runs until ``stop()``, a fatal error, or the end of the consumer.
    /// - Throws: ``Failure`` for a fatal error (e.g. FCM refuses the service account); what was
    ///   done before it is committed.
    ///
    /// A ``DeliveryEngine`` runs it: the reader, the commit loop and the runners are children of
    /// one task group. Cancelling the task that runs it cancels them all: the reader takes
    /// nothing more, sends under way end as abandoned (not committed), and what finished is
    /// committed before the consumer closes.
    public func run() async throws {
        try consumer.subscribe(topics: configuration.topics)
        logger.info("consuming", metadata: ["topics": "\(configuration.topics.joined(separator: ","))"])
        do {
            try await run(reading: consumer)
        } catch {
            throw Failure(description: "the pipeline ran already; make a new one")
        }
        if let failure = engine.failure { throw Failure(description: failure) }
    }

    /// The engine runs the work with the source's own type (its messages' iterator unboxed).
    private func run(reading source: some MessageSource) async throws(DeliveryEngine.AlreadyRan) {
        try await engine.run(PipelineWork(pipeline: self, source: source))
    }

    /// Stops the run with `reason` (its error): what finished is committed first.
    func fail(_ reason: String) {
        engine.fail(reason)
    }

    // MARK: Commits

    /// Commits every `commitInterval`, and sooner when `commitEveryEvents` events finished
    /// (``PipelineCoordinator/commitLoop(every:commit:)``).
    func commitLoop() async {
        await coordinator.commitLoop(every: configuration.commitInterval) { await commitNow(nil) }
    }

    /// Commits what is done in `partitions` (all if nil) and waits for the broker.
    @discardableResult
    func commitNow(_ partitions: [TopicPartition]?) async -> PipelineCoordinator.CommitResult {
        await coordinator.commit(partitions, through: consumer, metrics: metrics, log: failures, tracer: processor.tracer)
    }

    /// Waits until no events of `partitions` (all if nil) are in flight, or `timeout` passes.
    func waitUntilDrained(_ partitions: [TopicPartition]?, timeout: Duration) async -> Bool {
        await coordinator.waitUntilDrained(partitions, timeout: timeout)
    }
}
