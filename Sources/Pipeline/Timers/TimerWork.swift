import Kafka
import Logging

/// What the ``DeliveryEngine`` runs for a ``TimerPipeline``: records admitted into the shelf's
/// due gate (not the engine's queue), a release loop beside the commit loop that hands ripe
/// records to the runners, each then forwarded or fired, and the drain that gives waiting
/// records up. Records that are no timer go to the runners at once, to be dead-lettered.
struct TimerWork<Source: MessageSource>: EngineWork {
    let timers: TimerPipeline
    let source: Source
    /// The timers' configuration, held here: read per record (a computed copy of the whole
    /// struct each time showed in profiles).
    private let configuration: TimerPipeline.Configuration

    init(timers: TimerPipeline, source: Source) {
        (self.timers, self.source, configuration) = (timers, source, timers.configuration)
    }

    private var coordinator: PipelineCoordinator { timers.coordinator }
    private var shelf: TimerShelf { timers.shelf }

    var messages: Source.Messages { source.messages }

    func admit(_ message: KafkaMessage) -> (process: Bool, waitForRoom: Bool) {
        let admission = coordinator.receive(message, to: source, onPauseFailure: pauseFailed)
        guard admission.receipt == .process else { return (false, admission.full) }
        // Unreadable: a runner dead-letters it.
        guard let timer = try? TimerRecord(parsing: message) else { return (true, admission.full) }
        let wake = configuration.layout.ladder.wake(due: timer.due, release: timer.release)
        switch shelf.admit(WaitingTimer(message: message, timer: timer), wake: wake) {
        case .waiting, .abandoned: break
        case .outOfOrder:
            timers.logger.warning(
                "a timer record read twice is left to the next read", metadata: ["record": "\(message.topicPartition)/\(message.offset)"])
        case .full:
            // Cannot happen while the table holds partitions at `window` (the shelf takes that
            // plus the consumer's buffer): stop rather than lose track of a record.
            timers.fail("timer gate overflow at \(message.topicPartition)/\(message.offset)")
        }
        return (false, admission.full)
    }

    func waitForRoom() async {
        _ = await coordinator.roomFreed.wait { !coordinator.isFull }
    }

    /// A record that is no timer: dead-lettered with the reason (or skipped without a
    /// dead-letter topic), then done.
    func process(_ message: KafkaMessage, runner: RunnerHandle) async {
        do {
            _ = try TimerRecord(parsing: message)
            finished(message, done: false)  // not reached: only unreadable records are queued
        } catch {
            guard let topic = configuration.deadLetterTopic else {
                timers.logger.error(
                    "skipping a record that is no timer", metadata: ["record": "\(message.topicPartition)/\(message.offset)", "error": "\(error)"])
                return finished(message, done: true)
            }
            let reason = DeadLetterReason(code: error.code.description, reason: error.description)
            let record = OutputRecords.deadLetter(message, reason: reason, topic: topic, nowMilliseconds: configuration.clock.nowMilliseconds())
            finished(message, done: await runner.waiting { await write(record, for: message) })
        }
    }

    /// Forwards or fires a record whose wake came (in a runner, counted as waiting).
    private func release(_ waiting: WaitingTimer) async {
        let (message, timer) = (waiting.message, waiting.timer)
        // Its partition given up meanwhile: the next owner reads it again.
        guard coordinator.holds(message.topicPartition) else { return }
        let (clock, ladder) = (configuration.clock, configuration.layout.ladder)
        var now = clock.nowMilliseconds()
        if let cancel = timers.cancels?.cancellation(of: timer, now: now) {
            // Done here, at whatever level: the fire only accounts for it (an outcome record).
            timers.metrics.timerCancelled()
            let context = TimerContext(now: now, partition: message.partition, offset: message.offset, cancelled: cancel)
            return finished(message, done: await timers.fire(timer, context))
        }
        var step = ladder.next(due: timer.due, now: now)
        // Released late, under a second left: the rest is waited here.
        while case .wait(let until) = step {
            try? await Task.sleep(for: clock.realDuration(untilMilliseconds: until))
            if Task.isCancelled { return finished(message, done: false) }
            now = clock.nowMilliseconds()
            step = ladder.next(due: timer.due, now: now)
        }
        switch step {
        case .forward(let level, let release):
            let done = await write(forward(timer, level: level, release: release, now: now), for: message)
            if done { timers.metrics.timerForwarded(level: level) }
            finished(message, done: done)
        case .fire, .wait:
            timers.metrics.timerFired(reason: timer.reason.rawValue, lateMilliseconds: now - timer.due)
            finished(message, done: await timers.fire(timer, TimerContext(now: now, partition: message.partition, offset: message.offset)))
        }
    }

    /// Starts the forward of a ripe record without a task: done when Kafka acknowledges it (on
    /// the producer's thread); a failed write goes to a runner, which writes it again with
    /// retries (``release(_:)``). False when the record is no forward now (a fire, or under a
    /// second left), its partition was given up, or the producer cannot (a fake, its queue
    /// full): then a runner releases it. Most records of a ladder are forwards; this saves each
    /// a task and a continuation.
    private func startForward(_ waiting: WaitingTimer, runner: RunnerHandle) -> Bool {
        let (message, timer) = (waiting.message, waiting.timer)
        guard coordinator.holds(message.topicPartition) else { return false }
        let now = configuration.clock.nowMilliseconds()
        if let cancels = timers.cancels, cancels.cancellation(of: timer, now: now) != nil { return false }
        guard case .forward(let level, let release) = configuration.layout.ladder.next(due: timer.due, now: now) else { return false }
        let record = forward(timer, level: level, release: release, now: now)
        return timers.producer.start(record) { result in
            switch result {
            case .success:
                timers.metrics.timerForwarded(level: level)
                finished(message, done: true)
            case .failure(let error):
                writeFailed(record, for: message, error)
                runner.later { await self.release(waiting) }
            }
        }
    }

    /// `timer` written again, to `level`'s partition for its key, released at `release`.
    private func forward(_ timer: TimerRecord, level: Int, release: Int64, now: Int64) -> KafkaProducerRecord {
        let partition = configuration.layout.partition(key: timer.key, level: level)
        return OutputRecords.timer(timer.forwarded(release: release), topic: configuration.topic, partition: partition, nowMilliseconds: now)
    }

    private func write(_ record: KafkaProducerRecord, for message: KafkaMessage) async -> Bool {
        await timers.producer.writeUntilAcknowledged(record) { error in writeFailed(record, for: message, error) }
    }

    private func writeFailed(_ record: KafkaProducerRecord, for message: KafkaMessage, _ error: KafkaError) {
        timers.metrics.recordWriteErrors.increment()
        timers.failures.log(
            .error, "cannot write to \(record.topic), will retry", kind: "write \(record.topic)",
            metadata: ["source": "\(message.topic)/\(message.partition)/\(message.offset)", "error": "\(error)"])
    }

    /// Records how a record ended. One not done stays in flight, never committed past, and is
    /// counted as abandoned: drains do not wait for it, and the partition's next owner reads it again.
    private func finished(_ message: KafkaMessage, done: Bool) {
        if !done { shelf.gaveUp(partition: message.partition) }
        coordinator.finished(message, done: done, source: source, onPauseFailure: pauseFailed)
    }

    private func pauseFailed(_ error: KafkaError) {
        timers.logger.warning("pause/resume failed: \(error)")
    }

    func readFailed(_ error: any Error) {
        timers.logger.critical("the timer consumer failed: \(error)")
    }

    func background(_ runner: RunnerHandle) async {
        await withDiscardingTaskGroup { group in
            group.addTask { await coordinator.commitLoop(every: configuration.engine.commitInterval) { await timers.commitNow(nil) } }
            group.addTask { await releaseLoop(runner) }
            if let cancels = timers.cancels {
                group.addTask {
                    do {
                        try await cancels.follow()
                    } catch {
                        timers.logger.error(
                            "cannot follow the cancel topic; cancelled pushes may be sent",
                            metadata: ["topic": "\(cancels.topic)", "error": "\(error)"])
                    }
                }
            }
        }
    }

    /// Starts the forwards of ripe records and hands the others to runners, then sleeps until
    /// the next wake, or until a record due sooner arrives (a signal): one deadline, no polling.
    private func releaseLoop(_ runner: RunnerHandle) async {
        let clock = configuration.clock
        // Nothing released before the cancellations written while the worker was down are read.
        if let cancels = timers.cancels, await !cancels.waitUntilCaughtUp(until: .now + .seconds(30)), !Task.isCancelled {
            timers.logger.warning(
                "the cancel topic was not read to its end in 30 s; timers are released meanwhile", metadata: ["topic": "\(cancels.topic)"])
        }
        while !Task.isCancelled {
            let (ripe, wake) = shelf.ripe(at: clock.nowMilliseconds())
            for waiting in ripe where !startForward(waiting, runner: runner) {
                runner.later { await release(waiting) }
            }
            let deadline = wake.map { ContinuousClock.now + clock.realDuration(untilMilliseconds: $0) }
            _ = await shelf.wakeChanged.wait(until: deadline) { shelf.armed != wake }
        }
    }

    /// Waiting records are given up at once; begun forwards and fires may finish until `deadline`.
    func drain(until deadline: ContinuousClock.Instant) async {
        let partitions = coordinator.partitions
        shelf.abandon(partitions)
        let drained = await coordinator.waitUntilDrained(nil, timeout: deadline - .now) { shelf.abandoned(partitions) }
        guard !drained else { return }
        timers.logger.warning(
            "stopping with forwards or fires under way; they are not committed and will be done again",
            metadata: ["in_flight": "\(coordinator.inFlight - shelf.abandoned(partitions))"])
    }

    /// A release dropped at the end: its record stays unfinished (never committed past).
    func dropped(_ count: Int) {}

    func close() async {
        await timers.commitNow(nil)
        coordinator.remove(coordinator.partitions)
        await source.close()
    }
}
