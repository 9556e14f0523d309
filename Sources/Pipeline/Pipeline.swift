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
/// Each admitted message waits in an ``EventQueue`` until one of the runner tasks takes it
/// through
/// ``EventProcessor/process(_:)``. Offsets are committed
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
        /// Events processed at once at most (rendered, sending, writing their records); the
        /// other events in flight wait as plain values. Below it, as many as the sender's
        /// ``PushSending/concurrencyLimit`` (the sends FCM's answer times call for). The worker
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
        /// The project's FCM send rate, split across the group by the partitions each member
        /// holds (``ProjectQuotaShare``), set on the sender at every rebalance. nil: no split.
        public var projectQuota: ProjectQuotaShare?

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
    let coordinator: PipelineCoordinator
    let consumer: any MessageSource
    private let queue: EventQueue
    private let state = Mutex(RunState())

    private struct RunState {
        var stopRequested = false
        var running = false
    }

    /// Notified by ``stop()``: the reader's watcher ends the reader.
    private let stopSignal = ChangeSignal()

    /// A pipeline reading from a ``KafkaConsumer`` in the group of `configuration.consumer`.
    public convenience init(configuration: Configuration, processor: EventProcessor, metrics: PipelineMetrics, logger: Logger) throws(KafkaError) {
        var consumerConfiguration = configuration.consumer
        for (key, value) in Self.consumerDefaults where consumerConfiguration.properties[key] == nil {
            consumerConfiguration.properties[key] = value
        }
        try self.init(configuration: configuration, processor: processor, metrics: metrics, logger: logger) { handler throws(KafkaError) in
            try KafkaConsumer(
                configuration: consumerConfiguration,
                rebalanceHandler: handler,
                errorHandler: { error in logger.warning("kafka: \(error)") },
                logHandler: { entry in
                    if entry.level <= 4 { logger.warning("librdkafka \(entry.facility): \(entry.message)") }
                })
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
        self.metrics = metrics
        self.logger = logger
        // What a crash can make the next owner send again: the events in flight plus those
        // finished since the last commit. Commits that fail must not let the second part grow.
        var limits = configuration.limits
        limits.maxUncommittedEvents = limits.maxEventsInFlight + max(1, configuration.commitEveryEvents)
        let coordinator = PipelineCoordinator(
            limits: limits, withOffsetMap: configuration.offsetMap,
            commitEveryEvents: configuration.commitEveryEvents)
        self.coordinator = coordinator
        let sender = processor.sender
        self.queue = EventQueue(maxRunners: configuration.maxEventsRunning, runnerLimit: { sender.concurrencyLimit })
        let handlers = RebalanceHandlers(
            coordinator: coordinator, configuration: configuration, sender: processor.sender, metrics: metrics, logger: logger)
        let consumer = try makeSource(handlers.handler)
        self.consumer = consumer
        handlers.consumer.withLock { $0 = consumer }
    }

    /// librdkafka properties the pipeline sets unless the configuration does.
    ///
    /// It fetches less ahead than librdkafka's defaults (64 MB, 100k messages per partition), so
    /// what was fetched before a pause stays small: memory stays flat. With so small a queue a
    /// partition crosses the threshold on almost every fetch, and librdkafka then waits
    /// `fetch.queue.backoff.ms` (default 1 s) before it fetches that partition again: that capped
    /// consumption at ~19k messages/s on 4 partitions. 10 ms lifts it to ~500k/s (measured with
    /// tansu, docs/benchmarks.md). The property is new in librdkafka 2.1, so it is set only where
    /// the library takes it.
    static var consumerDefaults: [String: String] {
        var defaults = ["queued.max.messages.kbytes": "4096", "queued.min.messages": "1000"]
        if KafkaConsumer.librdkafkaAccepts(property: "fetch.queue.backoff.ms", value: "10") { defaults["fetch.queue.backoff.ms"] = "10" }
        return defaults
    }

    /// Whether ``run()`` is consuming (it holds an assignment, or is waiting for one).
    public var isRunning: Bool { state.withLock { $0.running } }

    /// The partitions this worker holds.
    public var assignment: Set<TopicPartition> { consumer.assignment }

    /// The offsets the broker acknowledged as committed by this worker, per partition it holds.
    public var committedOffsets: [TopicPartition: Int64] { coordinator.committedOffsets }

    /// Asks ``run()`` to stop taking messages, finish what is in flight (up to
    /// ``Configuration/shutdownTimeout``), commit, and leave the group.
    public func stop() {
        state.withLock { $0.stopRequested = true }
        stopSignal.notify()
    }

    /// Subscribes and runs until ``stop()``, a fatal error, or the end of the consumer.
    /// - Throws: ``Failure`` for a fatal error (e.g. FCM refuses the service account); what was
    ///   done before it is committed.
    ///
    /// Its work runs in one task group: the reader, the commit loop, and the runners the reader
    /// asks for as events arrive. Cancelling the task that runs it cancels them all: the reader
    /// takes nothing more, sends under way end as abandoned (not committed), and what finished
    /// is committed before the consumer closes.
    public func run() async throws {
        try consumer.subscribe(topics: configuration.topics)
        logger.info("consuming", metadata: ["topics": "\(configuration.topics.joined(separator: ","))"])
        state.withLock { $0.running = true }
        await withDiscardingTaskGroup { group in
            group.addTask { await self.commitLoop() }
            // The reader asks for a runner by a yield (the group is the body's to add to).
            let (runnerRequests, requestRunner) = AsyncStream<Void>.makeStream()
            group.addTask {
                await self.readUntilStopped { requestRunner.yield() }
                requestRunner.finish()
            }
            for await _ in runnerRequests {
                group.addTask { await self.runEvents() }
            }

            // The reader ended: drain, then the runners and the commit loop end.
            state.withLock { $0.running = false }
            let drained = await waitUntilDrained(nil, timeout: configuration.shutdownTimeout)
            if !drained {
                let left = coordinator.inFlight
                logger.warning(
                    "stopping with events in flight; they are not committed and will be sent again",
                    metadata: [
                        "in_flight": "\(left)"
                    ])
            }
            // Idle runners get nil; busy ones (only if not drained) are cancelled: no new
            // attempts or records for their events, which belong to the next owner now.
            queue.close()
            group.cancelAll()
        }
        await commitNow(nil)
        // What is still counted in flight (abandoned, or dropped from the queue) was given up
        // above: forgotten now, so the revoke that close() runs does not wait for it.
        coordinator.remove(coordinator.partitions)
        await consumer.close()
        if let fatal = coordinator.fatalError { throw Failure(description: fatal) }
    }

    // MARK: Reading

    /// Reads until ``stop()`` (which cancels the read), the consumer's end, or a fatal error.
    private func readUntilStopped(requestRunner: @escaping @Sendable () -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.read(from: self.consumer, requestRunner: requestRunner) }
            group.addTask { _ = await self.stopSignal.wait { self.state.withLock { $0.stopRequested } } }
            await group.next()
            group.cancelAll()
        }
    }

    private func read(from source: some MessageSource, requestRunner: @Sendable () -> Void) async {
        do {
            for try await message in source.messages {
                // stop(): messages still buffered are not taken. Not admitted, so not tracked:
                // the commit stops before them and the next owner reads them.
                if Task.isCancelled { break }
                metrics.eventsConsumed.increment()
                let admission = coordinator.receive(message)
                if admission.stopping { break }
                switch admission.receipt {
                case .process:
                    metrics.eventsInFlight.increment()
                    if queue.push(message) { requestRunner() }
                case .skipAlreadyDone:
                    metrics.eventsAlreadyDone.increment()
                case .ignore:
                    break
                }
                apply(admission.flow)
                // Messages fetched before a pause still arrive: at the bound, stop reading until
                // events finish, so events in flight never exceed maxEventsInFlight.
                if admission.full {
                    // Woken when an event finishes or a commit is acknowledged and frees room;
                    // stop() cancels the read.
                    _ = await coordinator.roomFreed.wait { !coordinator.isFull }
                }
            }
        } catch {
            coordinator.fail("kafka: \(error)")
            logger.critical("the consumer failed: \(error)")
        }
    }

    /// A runner: takes events from the queue until it is closed, or the runner is cancelled.
    private func runEvents() async {
        while let message = await queue.next() {
            if coordinator.holds(message.topicPartition) {
                await handle(message)
            } else {
                // Its partition was given up while it waited: it is the next owner's now,
                // and it was never finished here, so no commit of ours passed it.
                metrics.eventsInFlight.decrement()
            }
            if Task.isCancelled { return }
        }
    }

    private func handle(_ message: KafkaMessage) async {
        let outcome = await processor.process(message)
        var fatal: String?
        if case .fatal(let why) = outcome.verdict.disposition { fatal = why }
        // Before `finished` frees the slot, so the reader's next admission cannot lift the gauge
        // above max_events_in_flight, even for a moment.
        metrics.eventsInFlight.decrement()
        let flow = coordinator.finished(message, done: outcome.done, fatal: fatal)
        if outcome.done, let timestamp = message.timestamp {
            metrics.deliveryLag(sinceMilliseconds: timestamp.milliseconds)
        }
        apply(flow)
        if fatal != nil { stop() }
    }

    /// Brings the consumer's paused partitions to what the partition table says now.
    ///
    /// The reader and the runners compute flow changes under the coordinator's lock but apply
    /// them outside it. Applied as they came, a resume could overtake the pause it undoes and
    /// leave the partition paused for good while the table thinks it is read (the fake consumer
    /// of PipelineScenarioTests caught it under load). So each change is only a cue: the applier
    /// brings the consumer to the table's current state, one applier at a time, and the last
    /// change is followed by an apply that sees it. Partitions given up are not resumed here:
    /// the consumer resumes them when it unassigns them.
    private func apply(_ flow: PartitionTable.FlowChange) {
        guard !flow.isEmpty else { return }
        coordinator.consumerPaused.withLock { applied in
            let (held, wanted) = coordinator.pauseState
            let order: (TopicPartition, TopicPartition) -> Bool = { ($0.topic, $0.partition) < ($1.topic, $1.partition) }
            let pause = wanted.subtracting(applied).sorted(by: order)
            let resume = applied.subtracting(wanted).intersection(held).sorted(by: order)
            // Counted as paused before the call, and as resumed only after it succeeds: after a
            // failure (some partitions may have changed) a later resume is still sent.
            applied.formUnion(pause)
            do {
                try consumer.pause(pause)
                try consumer.resume(resume)
                applied.subtract(resume)
                applied.formIntersection(held)
            } catch {
                logger.warning("pause/resume failed: \(error)")
            }
            if !pause.isEmpty { logger.debug("paused \(pause)") }
        }
        metrics.pausedPartitions.record(coordinator.pausedCount)
    }

    // MARK: Commits

    /// Commits every `commitInterval`, and sooner when `commitEveryEvents` events finished
    /// (woken by the coordinator, not polling it). After a commit that failed, or that found
    /// nothing to commit while events wait behind an unfinished one, the next comes at the
    /// interval: "due" would hold at once again, and commits would follow each other unpaced.
    private func commitLoop() async {
        var paced = false
        while !Task.isCancelled {
            let next = ContinuousClock.now + configuration.commitInterval
            if paced {
                try? await Task.sleep(until: next)
            } else {
                _ = await coordinator.commitBecameDue.wait(until: next) { coordinator.commitDue }
            }
            if Task.isCancelled { return }
            paced = await commitNow(nil) != .committed
        }
    }

    /// Commits what is done in `partitions` (all if nil) and waits for the broker.
    @discardableResult
    func commitNow(_ partitions: [TopicPartition]?) async -> RebalanceHandlers.CommitResult {
        await RebalanceHandlers.commit(partitions, consumer: consumer, coordinator: coordinator, metrics: metrics, logger: logger)
    }

    /// Waits until no events of `partitions` (all if nil) are in flight, or `timeout` passes.
    func waitUntilDrained(_ partitions: [TopicPartition]?, timeout: Duration) async -> Bool {
        await RebalanceHandlers.waitUntilDrained(partitions, coordinator: coordinator, timeout: timeout)
    }
}
