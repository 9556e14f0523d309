import Kafka
import Logging
import Mapping
import Synchronization
import Threading

/// Reads a ``ReplayPlan``'s ranges in assign mode and sends them again, or renders them only.
///
/// It never joins a consumer group, so no running worker is disturbed and the production group's
/// offsets never move. With ``Configuration/commit`` it commits its own progress to
/// `consumer.groupID`, a group of its own.
///
/// ```swift
/// let replay = try Replay(configuration: c, mappings: set, mode: .send(processor), logger: log)
/// let summary = try await replay.run { progress, elapsed in print(progress.line(elapsedSeconds: elapsed)) }
/// ```
public final class Replay: Sendable {
    public struct Configuration: Sendable {
        /// Assign mode; `groupID` only matters with ``commit``.
        public var consumer: KafkaConsumerConfiguration
        public var plan: ReplayPlan
        /// Only these event types are replayed; empty: all.
        public var eventTypes: Set<String> = []
        /// Writer schemas for the event-type filter and a dry run (a replay that sends uses its
        /// processor's, which should be the same).
        public var schemas = RecordSchemas()
        /// Commit progress (the first unfinished offset per partition) to `consumer.groupID`.
        public var commit = false
        /// Whether a dry run applies the mappings' `max_age`. A replay that sends follows its
        /// processor's ``EventProcessor/Options/maxAge``, which should say the same.
        public var maxAge = MaxAgeCheck.enforce
        public var maxEventsInFlight = 1_000
        /// The by-subject topic a replay that sends hands events of mappings with `cap` or
        /// `dedup` to (its processor's ``EventProcessor/Options/rekeyTopic``), for the workers'
        /// rules stage; a dry run counts them as handed to it. nil: they are sent as any other.
        public var rulesStage: String?
        /// Pushes due later are written to the timer topic (`--rearm-timers`; a replay that
        /// sends has ``EventProcessor/Options/timers`` set then); a dry run counts them as
        /// deferred. False: they are skipped as `timer_not_armed`.
        public var rearmTimers = false
        /// How long events in flight may take after ``Replay/stop()``.
        public var shutdownTimeout: Duration = .seconds(30)
        public var progressInterval: Duration = .seconds(2)
        /// With no message for this long, the positions are checked: a range whose last offsets
        /// are gaps (compaction, transaction markers) ends without a message at `end - 1`.
        public var idleCheck: Duration = .seconds(2)

        public init(consumer: KafkaConsumerConfiguration, plan: ReplayPlan) {
            self.consumer = consumer
            self.plan = plan
        }
    }

    public enum Mode: Sendable {
        /// Render only; each result goes to `inspect`. Nothing is sent or written.
        case dryRun(inspect: @Sendable (KafkaMessage, Result<MappingSet.Rendered, MappingFailure>) -> Void)
        /// Send through the same machinery as `run`: retries, dead-letters, invalidations.
        case send(EventProcessor)

        var isDryRun: Bool {
            if case .dryRun = self { true } else { false }
        }
    }

    public struct Summary: Sendable {
        public var progress: ReplayProgress
        /// Per partition not finished: the offset a resumed replay starts at.
        public var resume: [TopicPartition: Int64]
        /// Why the replay ended early on its own (FCM refused the setup, Kafka failed).
        public var failure: String?
        public var isComplete: Bool { resume.isEmpty && failure == nil }
    }

    let configuration: Configuration
    let mappings: MappingSet
    let mode: Mode
    let logger: Logger
    let consumer: KafkaConsumer
    let shared: Shared
    let engine: DeliveryEngine

    final class Shared: Sendable {
        let state: Mutex<State>
        let engine: DeliveryEngine
        /// Notified when an event ends: the reader waits for room below `maxEventsInFlight`, and
        /// the drain for none in flight.
        let eventEnded = ChangeSignal()
        init(_ state: State, engine: DeliveryEngine) {
            self.state = Mutex(state)
            self.engine = engine
        }

        /// The consumer read everything partition `eof.topicPartition` holds: its range ends
        /// there even if the plan's end lies beyond (an end past the high watermark).
        func endOfPartition(_ eof: TopicPartitionOffset) {
            let over = state.withLock { s -> Bool in
                s.ranges.reachedEnd(of: eof.topicPartition, at: eof.offset.rawValue)
                return s.ranges.isReadOver
            }
            if over { engine.stop() }
        }
    }

    struct State {
        var ranges: ReplayRanges
        var progress: ReplayProgress
        var inFlight = 0
        /// When a message was last taken or an event last ended: the reader has been waiting on
        /// the consumer since, unless every slot is taken.
        var lastActivity = ContinuousClock.now
    }

    public init(configuration: Configuration, mappings: MappingSet, mode: Mode, logger: Logger) throws(KafkaError) {
        self.configuration = configuration
        self.mappings = mappings
        self.mode = mode
        self.logger = logger
        let runnerLimit: @Sendable (Int) -> Int
        if case .send(let processor) = mode {
            let sender = processor.sender
            runnerLimit = { _ in sender.concurrencyLimit }
        } else {
            runnerLimit = { _ in .max }
        }
        let engine = DeliveryEngine(
            maxRunners: configuration.maxEventsInFlight, runnerLimit: runnerLimit, shutdownTimeout: configuration.shutdownTimeout)
        self.engine = engine
        let shared = Shared(
            State(ranges: ReplayRanges(configuration.plan), progress: ReplayProgress(planned: configuration.plan.total)), engine: engine)
        self.shared = shared
        var consumerConfiguration = configuration.consumer
        if !configuration.commit { consumerConfiguration.groupID = nil }
        let logs: KafkaLogs
        if case .send(let processor) = mode { logs = KafkaLogs(summary: processor.failures) } else { logs = KafkaLogs(logger: logger) }
        self.consumer = try KafkaConsumer(
            configuration: consumerConfiguration,
            errorHandler: logs.errorHandler,
            logHandler: logs.lineHandler,
            endOfPartitionHandler: { shared.endOfPartition($0) })
    }

    /// Stop reading, let events in flight finish (up to ``Configuration/shutdownTimeout``).
    public func stop() { engine.stop() }

    /// Reads every range to its end (or until ``stop()``), then waits for the events in flight.
    /// A ``DeliveryEngine`` runs it (``ReplayWork``); the end of the read comes from the ranges
    /// (``ReplayRanges``): every range read, or its partition's end reached.
    public func run(progress report: @escaping @Sendable (ReplayProgress, _ elapsedSeconds: Double) -> Void = { _, _ in }) async throws -> Summary {
        let ranges = configuration.plan.ranges.filter { !$0.isEmpty }
        if ranges.isEmpty {
            await consumer.close()
        } else {
            try consumer.assign(ranges.map { TopicPartitionOffset($0.partition, offset: KafkaOffset($0.start)) })
            do {
                try await engine.run(ReplayWork(replay: self, started: .now, report: report))
            } catch {
                throw Failure(description: "the replay ran already; make a new one")
            }
        }
        let failure = engine.failure
        return shared.state.withLock { s in
            var resume: [TopicPartition: Int64] = [:]
            for range in configuration.plan.ranges where !s.ranges.isFinished(range) {
                resume[range.partition] = s.ranges.next(range)
            }
            return Summary(progress: s.progress, resume: resume, failure: failure)
        }
    }

    /// Why ``Replay/run(progress:)`` could not run.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Commits the first unfinished offset of every range, when asked to (``Configuration/commit``).
    func commitProgress() async {
        guard configuration.commit else { return }
        let offsets = shared.state.withLock { s in
            configuration.plan.ranges.map { TopicPartitionOffset($0.partition, offset: KafkaOffset(s.ranges.next($0))) }
        }
        do {
            try await consumer.commit(offsets)
        } catch {
            logger.warning("cannot commit replay progress; will retry", metadata: ["error": "\(error)"])
        }
    }
}
