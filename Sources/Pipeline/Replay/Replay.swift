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
    /// The plan's end offset (exclusive) per partition.
    private let ends: [TopicPartition: Int64]
    private let shared: Shared

    private final class Shared: Sendable {
        let state: Mutex<State>
        /// Notified when an event ends: the reader waits for room below `maxEventsInFlight`, and
        /// the drain for none in flight.
        let eventEnded = ChangeSignal()
        init(_ state: State) { self.state = Mutex(state) }

        /// The consumer read everything partition `eof.topicPartition` holds: its range ends
        /// there even if the plan's end lies beyond (an end past the high watermark).
        func endOfPartition(_ eof: TopicPartitionOffset) {
            let reader = state.withLock { s -> Task<Void, Never>? in
                let tp = eof.topicPartition
                guard s.reading.contains(tp) else { return nil }
                s.eof[tp] = eof.offset.rawValue
                // Caught up: the last offset before the end was received already, or nothing was
                // to be read (the range starts at or past the partition's end). Otherwise the
                // reader finishes the partition when that last offset arrives.
                let caughtUp =
                    s.lastReceived[tp].map { $0 + 1 >= eof.offset.rawValue }
                    ?? (s.trackers[tp]?.watermark ?? 0 >= eof.offset.rawValue)
                if caughtUp { s.reading.remove(tp) }
                return s.reading.isEmpty ? s.reader : nil
            }
            reader?.cancel()
        }
    }

    private struct State {
        var trackers: [TopicPartition: OffsetTracker] = [:]
        /// Partitions whose range has not been read to its end.
        var reading: Set<TopicPartition> = []
        /// Where each partition ended when the consumer reached its end, and the last offset
        /// received there.
        var eof: [TopicPartition: Int64] = [:]
        var lastReceived: [TopicPartition: Int64] = [:]
        var progress: ReplayProgress
        var inFlight = 0
        var events: [Int: Task<Void, Never>] = [:]
        var nextEventID = 0
        var lastMessage = ContinuousClock.now
        var reader: Task<Void, Never>?
        var stopRequested = false
        var failure: String?
    }

    public init(configuration: Configuration, mappings: MappingSet, mode: Mode, logger: Logger) throws(KafkaError) {
        self.configuration = configuration
        self.mappings = mappings
        self.mode = mode
        self.logger = logger
        var initial = State(progress: ReplayProgress(planned: configuration.plan.total))
        for range in configuration.plan.ranges {
            initial.trackers[range.partition] = OffsetTracker(committed: range.start)
            if !range.isEmpty { initial.reading.insert(range.partition) }
        }
        self.ends = Dictionary(uniqueKeysWithValues: configuration.plan.ranges.map { ($0.partition, $0.end) })
        let shared = Shared(initial)
        self.shared = shared
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
        let reader = shared.state.withLock { s -> Task<Void, Never>? in
            s.stopRequested = true
            return s.reader
        }
        reader?.cancel()
    }

    /// Reads every range to its end (or until ``stop()``), then waits for the events in flight.
    public func run(progress report: @escaping @Sendable (ReplayProgress, _ elapsedSeconds: Double) -> Void = { _, _ in }) async throws -> Summary {
        let started = ContinuousClock.now
        let ranges = configuration.plan.ranges.filter { !$0.isEmpty }
        if !ranges.isEmpty {
            try consumer.assign(ranges.map { TopicPartitionOffset($0.partition, offset: KafkaOffset($0.start)) })
            let reader = Task { await self.readLoop() }
            let stopAlready = shared.state.withLock { s -> Bool in
                s.reader = reader
                return s.stopRequested
            }
            if stopAlready { reader.cancel() }
            let monitor = Task { await self.monitor(started: started, report: report) }
            await reader.value
            monitor.cancel()
            await monitor.value
            await drain()
            await commitProgress()
        }
        await consumer.close()
        return shared.state.withLock { s in
            var resume: [TopicPartition: Int64] = [:]
            for range in configuration.plan.ranges where !Self.isFinished(range, in: s) {
                resume[range.partition] = Self.next(range, in: s)
            }
            return Summary(progress: s.progress, resume: resume, failure: s.failure)
        }
    }

    // MARK: Reading

    private func readLoop() async {
        do {
            for try await message in consumer.messages {
                let tp = message.topicPartition
                guard let end = ends[tp] else { continue }
                let admitted = shared.state.withLock { s -> Bool in
                    s.lastMessage = .now
                    guard message.offset < end, s.reading.contains(tp) else {
                        s.reading.remove(tp)
                        return false
                    }
                    s.lastReceived[tp] = message.offset
                    if message.offset >= min(end, s.eof[tp] ?? end) - 1 { s.reading.remove(tp) }
                    guard s.trackers[tp]?.receive(message.offset) == .process else { return false }
                    s.inFlight += 1
                    return true
                }
                if admitted { spawn(message) }
                if shared.state.withLock({ $0.reading.isEmpty || $0.stopRequested }) { break }
                _ = await shared.eventEnded.wait { shared.state.withLock { $0.inFlight < configuration.maxEventsInFlight } }
            }
        } catch {
            fail("kafka: \(error)")
        }
    }

    /// Reports progress, commits it when asked to, and ends the read when every remaining
    /// partition's position has passed its end without a message there (gaps).
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
            let (idle, reading, eof) = shared.state.withLock { (now - $0.lastMessage, Array($0.reading), $0.eof) }
            guard idle >= configuration.idleCheck, !reading.isEmpty else { continue }
            guard let positions = try? consumer.position(reading) else { continue }
            let passed = positions.filter { p in
                let end = min(ends[p.topicPartition, default: 0], eof[p.topicPartition] ?? .max)
                return p.offset.isConcrete && p.offset.rawValue >= end
            }
            shared.state.withLock { s in
                for p in passed { s.reading.remove(p.topicPartition) }
            }
            if shared.state.withLock({ $0.reading.isEmpty }) { shared.state.withLock { $0.reader }?.cancel() }
        }
    }

    // MARK: Events

    private func spawn(_ message: KafkaMessage) {
        shared.state.withLock { s in
            let id = s.nextEventID
            s.nextEventID &+= 1
            s.events[id] = Task {
                let (outcome, invalidations, done) = await self.handle(message)
                self.shared.state.withLock { s in
                    if done { s.trackers[message.topicPartition]?.done(message.offset) }
                    s.progress.record(done ? outcome : .unfinished, invalidations: invalidations)
                    s.inFlight -= 1
                    s.events.removeValue(forKey: id)
                }
                self.shared.eventEnded.notify()
            }
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

    /// Waits for events in flight, up to the shutdown timeout; then cancels what is left
    /// (those stay unfinished, and the resume offsets include them).
    private func drain() async {
        _ = await shared.eventEnded.wait(until: .now + configuration.shutdownTimeout) { shared.state.withLock { $0.inFlight == 0 } }
        let left = shared.state.withLock { Array($0.events.values) }
        if !left.isEmpty {
            logger.warning("stopping with events in flight; the resume offsets include them", metadata: ["in_flight": "\(left.count)"])
            for task in left { task.cancel() }
            for task in left { await task.value }
        }
    }

    private func commitProgress() async {
        guard configuration.commit else { return }
        let offsets = shared.state.withLock { s in
            configuration.plan.ranges.map { TopicPartitionOffset($0.partition, offset: KafkaOffset(Self.next($0, in: s))) }
        }
        do {
            try await consumer.commit(offsets)
        } catch {
            logger.warning("cannot commit replay progress; will retry", metadata: ["error": "\(error)"])
        }
    }

    /// Whether `range` was read to its end (or its partition's end) with every event done.
    private static func isFinished(_ range: ReplayRange, in s: State) -> Bool {
        !s.reading.contains(range.partition) && s.trackers[range.partition]?.uncommitted ?? 0 == 0
    }

    /// Where a resumed replay of `range` starts: the first unfinished offset, or once finished,
    /// its end (the partition's end when that came first: never past what exists).
    private static func next(_ range: ReplayRange, in s: State) -> Int64 {
        if isFinished(range, in: s) { return min(range.end, s.eof[range.partition] ?? range.end) }
        return s.trackers[range.partition]?.watermark ?? range.start
    }

    private static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
