import Kafka
import Mapping

/// What the ``DeliveryEngine`` runs for a ``Replay``: admission by the ranges
/// (``ReplayRanges``), events rendered (dry run) or sent, progress reported and committed, and
/// the end of ranges whose last offsets are gaps found from the consumer's positions.
struct ReplayWork: EngineWork {
    let replay: Replay
    let started: ContinuousClock.Instant
    let report: @Sendable (ReplayProgress, _ elapsedSeconds: Double) -> Void

    private var shared: Replay.Shared { replay.shared }
    private var configuration: Replay.Configuration { replay.configuration }

    var messages: KafkaMessageSequence { replay.consumer.messages }

    func admit(_ message: KafkaMessage) -> (process: Bool, waitForRoom: Bool) {
        let (admitted, full, over) = shared.state.withLock { s -> (Bool, Bool, Bool) in
            s.lastActivity = .now
            let admitted = s.ranges.receive(message.topicPartition, offset: message.offset)
            if admitted { s.inFlight += 1 }
            return (admitted, s.inFlight >= configuration.maxEventsInFlight, s.ranges.isReadOver)
        }
        if over { replay.engine.stop() }
        return (admitted, full)
    }

    func waitForRoom() async {
        _ = await shared.eventEnded.wait { shared.state.withLock { $0.inFlight < configuration.maxEventsInFlight } }
    }

    func process(_ message: KafkaMessage, runner: RunnerHandle) async {
        let (outcome, invalidations, done) = await handle(message)
        shared.state.withLock { s in
            if done { s.ranges.done(message.topicPartition, offset: message.offset) }
            s.progress.record(done ? outcome : .unfinished, invalidations: invalidations)
            s.inFlight -= 1
            s.lastActivity = .now
        }
        shared.eventEnded.notify()
    }

    private func handle(_ message: KafkaMessage) async -> (ReplayProgress.Outcome, invalidations: Int, done: Bool) {
        let record = EventRecord(message)
        // A Schema Registry record's schema, for the filter and a dry run (a send asks its processor).
        var schema: WriterSchema?
        var schemaFailure: MappingFailure?
        if !configuration.eventTypes.isEmpty || replay.mode.isDryRun {
            switch await configuration.schemas.writerSchema(of: record) {
            case .success(let s): schema = s
            case .failure(.failed(let failure)): schemaFailure = failure
            case .failure(.cancelled): return (.unfinished, 0, false)
            }
        }
        if !configuration.eventTypes.isEmpty {
            // An event whose type cannot be read is not of a selected type.
            let decoded = schema.map { replay.mappings.eventFormat.decode(record, schema: $0) } ?? replay.mappings.eventFormat.decode(record)
            guard schemaFailure == nil, case .success(let event) = decoded, configuration.eventTypes.contains(event.type) else {
                return (.filtered, 0, true)
            }
        }
        switch replay.mode {
        case .dryRun(let inspect):
            let rendered = schemaFailure.map { .failure($0) } ?? replay.mappings.render(record, schema: schema, maxAge: configuration.maxAge)
            inspect(message, rendered)
            switch rendered {
            case .success(let r) where configuration.rulesStage != nil && replay.mappings.stateful(of: r.event.type) != nil:
                return (.handedToRules, 0, true)
            // Due later: written to the timer topic with --rearm-timers, else skipped
            // (`timer_not_armed`), as a replay that sends does.
            case .success(let r) where r.deferral != nil: return (configuration.rearmTimers ? .deferred : .skipped, 0, true)
            case .success(let r): return (.sent(messages: r.messages.count), 0, true)
            case .failure(.unknownEventType): return (.skipped, 0, true)
            case .failure(.tooOld): return (.tooOld, 0, true)
            case .failure(.noVariant(let none)) where none.action == .skip: return (.skipped, 0, true)
            case .failure: return (.deadLettered, 0, true)
            }
        case .send(let processor):
            let outcome = await processor.process(message)
            let invalidations = outcome.verdict.invalidations.count
            if outcome.verdict.tooOld { return (.tooOld, invalidations, outcome.done) }
            switch outcome.verdict.disposition {
            case .delivered: return (.sent(messages: outcome.verdict.sent), invalidations, outcome.done)
            case .skipped where outcome.verdict.skipCode == EventProcessor.rekeyedCode: return (.handedToRules, invalidations, outcome.done)
            // Without --rearm-timers a push due later is skipped (`timer_not_armed`).
            case .skipped: return (.skipped, invalidations, outcome.done)
            case .deferred: return (.deferred, invalidations, outcome.done)
            case .deadLetter: return (.deadLettered, invalidations, outcome.done)
            case .fatal(let why):
                replay.engine.fail(why)
                return (.unfinished, 0, false)
            case .abandoned: return (.unfinished, 0, false)
            }
        }
    }

    func readFailed(_ error: any Error) {
        replay.logger.error("the consumer failed: \(error)")
    }

    /// Reports progress (and commits it when asked to) every `progressInterval`, and after
    /// `idleCheck` of a reader waiting on the consumer checks the positions: a range whose last
    /// offsets are gaps (compaction, transaction markers) ends without a message at `end - 1`.
    /// One timer, set to whichever of the two comes first; runs until the engine cancels it.
    ///
    /// The consumer fetches ahead of the reader, so its position says what the reader has had
    /// only while the reader takes everything it is given: not once the reading stopped, nor
    /// while every slot is taken (an FCM slower than `idleCheck`). Checked then, a position at
    /// the end would end ranges whose last messages were never read, and the replay would
    /// report them done.
    func background(_ runner: RunnerHandle) async {
        var nextReport = started + configuration.progressInterval
        var lastCheck = started
        while !Task.isCancelled {
            let lastActivity = shared.state.withLock { $0.lastActivity }
            let nextCheck = max(lastActivity, lastCheck) + configuration.idleCheck
            try? await Task.sleep(until: min(nextReport, nextCheck))
            if Task.isCancelled { return }
            let now = ContinuousClock.now
            if now >= nextReport {
                report(shared.state.withLock { $0.progress }, Self.seconds(now - started))
                await replay.commitProgress()
                nextReport = now + configuration.progressInterval
            }
            let (idle, reading, full) = shared.state.withLock {
                (now - $0.lastActivity, Array($0.ranges.reading), $0.inFlight >= configuration.maxEventsInFlight)
            }
            guard idle >= configuration.idleCheck else { continue }
            // Due, even with nothing left to check (the drain after the read): the next check is
            // an interval away, or this loop would spin on a deadline in the past.
            lastCheck = now
            guard !reading.isEmpty, !full, replay.engine.isReading, let positions = try? replay.consumer.position(reading) else { continue }
            let over = shared.state.withLock { s in
                s.ranges.positions(positions)
                return s.ranges.isReadOver
            }
            if over { replay.engine.stop() }
        }
    }

    /// What is left after the shutdown timeout stays unfinished, and the resume offsets include it.
    func drain(until deadline: ContinuousClock.Instant) async {
        _ = await shared.eventEnded.wait(until: deadline) { shared.state.withLock { $0.inFlight == 0 } }
        let left = shared.state.withLock { $0.inFlight }
        if left > 0 {
            replay.logger.warning("stopping with events in flight; the resume offsets include them", metadata: ["in_flight": "\(left)"])
        }
    }

    func dropped(_ count: Int) {
        shared.state.withLock { s in
            for _ in 0..<count { s.progress.record(.unfinished, invalidations: 0) }
            s.inFlight -= count
        }
    }

    func close() async {
        await replay.commitProgress()
        await replay.consumer.close()
    }

    private static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
