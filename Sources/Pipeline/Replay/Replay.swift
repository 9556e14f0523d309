import Kafka
import Logging
import Mapping
import Synchronization

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
        /// Commit progress (the first unfinished offset per partition) to `consumer.groupID`.
        public var commit = false
        public var maxEventsInFlight = 1_000
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
    private let shared: Shared
    /// Events read and not yet started wait here as values for a bounded pool of runners.
    private let queue: EventQueue

    private final class Shared: Sendable {
        let state: Mutex<State>
        /// Notified when an event ends: the reader waits for room below `maxEventsInFlight`, and
        /// the drain for none in flight.
        let eventEnded = ChangeSignal()
        /// Notified when the read should end: every range read to its end, or ``Replay/stop()``.
        let readEnded = ChangeSignal()
        init(_ state: State) { self.state = Mutex(state) }

        /// Whether the read is over: every range read, or a stop asked for.
        var readIsOver: Bool { state.withLock { $0.ranges.isReadOver || $0.stopRequested } }

        /// The consumer read everything partition `eof.topicPartition` holds: its range ends
        /// there even if the plan's end lies beyond (an end past the high watermark).
        func endOfPartition(_ eof: TopicPartitionOffset) {
            let over = state.withLock { s -> Bool in
                s.ranges.reachedEnd(of: eof.topicPartition, at: eof.offset.rawValue)
                return s.ranges.isReadOver
            }
            if over { readEnded.notify() }
        }
    }

    private struct State {
        var ranges: ReplayRanges
        var progress: ReplayProgress
        var inFlight = 0
        var lastMessage = ContinuousClock.now
        var stopRequested = false
        var failure: String?
    }

    public init(configuration: Configuration, mappings: MappingSet, mode: Mode, logger: Logger) throws(KafkaError) {
        self.configuration = configuration
        self.mappings = mappings
        self.mode = mode
        self.logger = logger
        let shared = Shared(State(ranges: ReplayRanges(configuration.plan), progress: ReplayProgress(planned: configuration.plan.total)))
        self.shared = shared
        let runnerLimit: @Sendable () -> Int
        if case .send(let processor) = mode {
            let sender = processor.sender
            runnerLimit = { sender.concurrencyLimit }
        } else {
            runnerLimit = { .max }
        }
        self.queue = EventQueue(maxRunners: configuration.maxEventsInFlight, runnerLimit: runnerLimit)
        var consumerConfiguration = configuration.consumer
        if !configuration.commit { consumerConfiguration.groupID = nil }
        self.consumer = try KafkaConsumer(
            configuration: consumerConfiguration,
            errorHandler: { error in logger.warning("kafka: \(error)") },
            logHandler: { entry in
                if entry.level <= 4 { logger.warning("librdkafka \(entry.facility): \(entry.message)") }
            },
            endOfPartitionHandler: { shared.endOfPartition($0) })
    }

    /// Stop reading, let events in flight finish (up to ``Configuration/shutdownTimeout``).
    public func stop() {
        shared.state.withLock { $0.stopRequested = true }
        shared.readEnded.notify()
    }

    /// Reads every range to its end (or until ``stop()``), then waits for the events in flight.
    public func run(progress report: @escaping @Sendable (ReplayProgress, _ elapsedSeconds: Double) -> Void = { _, _ in }) async throws -> Summary {
        let started = ContinuousClock.now
        let ranges = configuration.plan.ranges.filter { !$0.isEmpty }
        if !ranges.isEmpty {
            try consumer.assign(ranges.map { TopicPartitionOffset($0.partition, offset: KafkaOffset($0.start)) })
            // One task group: the reader, the monitor, and the runners the reader asks for.
            await withDiscardingTaskGroup { group in
                let (runnerRequests, requestRunner) = AsyncStream<Void>.makeStream()
                group.addTask {
                    await self.readUntilOver { requestRunner.yield() }
                    requestRunner.finish()
                }
                group.addTask { await self.monitor(started: started, report: report) }
                for await _ in runnerRequests {
                    group.addTask { await self.runEvents() }
                }
                await drain()
                group.cancelAll()  // the monitor, and runners still busy after the timeout
            }
            await commitProgress()
        }
        await consumer.close()
        return shared.state.withLock { s in
            var resume: [TopicPartition: Int64] = [:]
            for range in configuration.plan.ranges where !s.ranges.isFinished(range) {
                resume[range.partition] = s.ranges.next(range)
            }
            return Summary(progress: s.progress, resume: resume, failure: s.failure)
        }
    }

    // MARK: Reading

    /// Reads until every range is read or ``stop()``, which cancel the read.
    private func readUntilOver(requestRunner: @escaping @Sendable () -> Void) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.read(requestRunner: requestRunner) }
            group.addTask { _ = await self.shared.readEnded.wait { self.shared.readIsOver } }
            await group.next()
            group.cancelAll()
        }
    }

    private func read(requestRunner: @Sendable () -> Void) async {
        do {
            for try await message in consumer.messages {
                // Cancelled (the task running the replay): messages still buffered are not taken.
                if Task.isCancelled { break }
                let admitted = shared.state.withLock { s -> Bool in
                    s.lastMessage = .now
                    guard s.ranges.receive(message.topicPartition, offset: message.offset) else { return false }
                    s.inFlight += 1
                    return true
                }
                if admitted, queue.push(message) { requestRunner() }
                if shared.readIsOver { break }
                _ = await shared.eventEnded.wait { shared.state.withLock { $0.inFlight < configuration.maxEventsInFlight } }
            }
        } catch {
            fail("kafka: \(error)")
        }
    }

    /// Reports progress, commits it when asked to, and ends the read when every remaining
    /// partition's position has passed its end without a message there (gaps). Runs until the
    /// replay's task group ends it.
    private func monitor(started: ContinuousClock.Instant, report: @Sendable (ReplayProgress, Double) -> Void) async {
        var lastReport = ContinuousClock.now
        while !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(250))
            let now = ContinuousClock.now
            if now - lastReport >= configuration.progressInterval {
                lastReport = now
                report(shared.state.withLock { $0.progress }, Self.seconds(now - started))
                await commitProgress()
            }
            let (idle, reading) = shared.state.withLock { (now - $0.lastMessage, Array($0.ranges.reading)) }
            guard idle >= configuration.idleCheck, !reading.isEmpty else { continue }
            guard let positions = try? consumer.position(reading) else { continue }
            shared.state.withLock { $0.ranges.positions(positions) }
            if shared.readIsOver { shared.readEnded.notify() }
        }
    }

    // MARK: Events

    /// A runner: takes events from the queue until it is closed, or the runner is cancelled.
    private func runEvents() async {
        while let message = await queue.next() {
            let (outcome, invalidations, done) = await handle(message)
            shared.state.withLock { s in
                if done { s.ranges.done(message.topicPartition, offset: message.offset) }
                s.progress.record(done ? outcome : .unfinished, invalidations: invalidations)
                s.inFlight -= 1
            }
            shared.eventEnded.notify()
            if Task.isCancelled { return }
        }
    }

    private func handle(_ message: KafkaMessage) async -> (ReplayProgress.Outcome, invalidations: Int, done: Bool) {
        let record = EventRecord(message)
        if !configuration.eventTypes.isEmpty {
            // An event whose type cannot be read is not of a selected type.
            guard case .success(let event) = mappings.eventFormat.decode(record), configuration.eventTypes.contains(event.type) else {
                return (.filtered, 0, true)
            }
        }
        switch mode {
        case .dryRun(let inspect):
            let rendered = mappings.render(record)
            inspect(message, rendered)
            switch rendered {
            case .success(let r): return (.sent(messages: r.messages.count), 0, true)
            case .failure(.unknownEventType): return (.skipped, 0, true)
            case .failure: return (.deadLettered, 0, true)
            }
        case .send(let processor):
            let outcome = await processor.process(message)
            let invalidations = outcome.verdict.invalidations.count
            switch outcome.verdict.disposition {
            case .delivered: return (.sent(messages: outcome.verdict.sent), invalidations, outcome.done)
            case .skipped: return (.skipped, invalidations, outcome.done)
            case .deadLetter: return (.deadLettered, invalidations, outcome.done)
            case .fatal(let why):
                fail(why)
                return (.unfinished, 0, false)
            case .abandoned: return (.unfinished, 0, false)
            }
        }
    }

    private func fail(_ reason: String) {
        shared.state.withLock { s in
            if s.failure == nil { s.failure = reason }
        }
        stop()
    }

    /// Waits for events in flight, up to the shutdown timeout. What is left then stays
    /// unfinished, and the resume offsets include it: events not started are dropped from the
    /// queue here, and the caller cancels the runners still busy.
    private func drain() async {
        _ = await shared.eventEnded.wait(until: .now + configuration.shutdownTimeout) { shared.state.withLock { $0.inFlight == 0 } }
        let left = shared.state.withLock { $0.inFlight }
        if left > 0 {
            logger.warning("stopping with events in flight; the resume offsets include them", metadata: ["in_flight": "\(left)"])
        }
        let dropped = queue.close()
        shared.state.withLock { s in
            for _ in 0..<dropped { s.progress.record(.unfinished, invalidations: 0) }
            s.inFlight -= dropped
        }
    }

    private func commitProgress() async {
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

    private static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
