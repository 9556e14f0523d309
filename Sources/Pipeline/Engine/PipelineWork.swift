import Kafka

/// What the ``DeliveryEngine`` runs for a ``Pipeline``: admission through the coordinator's
/// ``DeliveryStateMachine``, events through the ``EventProcessor``, commits on their interval,
/// and the final commit.
struct PipelineWork<Source: MessageSource>: EngineWork {
    let pipeline: Pipeline
    let source: Source

    private var coordinator: PipelineCoordinator { pipeline.coordinator }
    private var metrics: PipelineMetrics { pipeline.metrics }

    var messages: Source.Messages { source.messages }

    func admit(_ message: KafkaMessage) -> (process: Bool, waitForRoom: Bool) {
        metrics.eventsConsumed.increment()
        let admission = coordinator.receive(message, to: source, onPauseFailure: pauseFailed)
        switch admission.receipt {
        case .process: metrics.eventsInFlight.increment()
        case .skipAlreadyDone: metrics.eventsAlreadyDone.increment()
        case .ignore: break
        }
        if admission.flowChanged { metrics.pausedPartitions.record(coordinator.pausedCount) }
        return (admission.receipt == .process, admission.full)
    }

    func waitForRoom() async {
        _ = await coordinator.roomFreed.wait { !coordinator.isFull }
    }

    func process(_ message: KafkaMessage, runner: RunnerHandle) async {
        guard stillHeld(message) else { return }
        // Begun without a task where it can be (``EventProcessor/begin(_:then:)``): its end
        // comes on the FCM client's thread, and what then needs a task runs in a runner.
        await carry(pipeline.processor.begin(message, then: ending(of: message, runner)), of: message, runner: runner)
    }

    /// Takes an event on from where ``EventProcessor/begin(_:then:)`` left it.
    private func carry(_ begun: EventProcessor.Begun, of message: KafkaMessage, runner: RunnerHandle) async {
        let processor = pipeline.processor
        var begun = begun
        while case .full(let prepared, let project) = begun {
            if processor.sendsForSeveralProjects {
                // Another project's events may be queued behind this one, and their sends may
                // have room: set this one aside, without a task, until its project has room.
                processor.whenRoom(project: project) { [self] in
                    // Its partition given up meanwhile: the room passes to the next event.
                    guard stillHeld(message) else { return false }
                    runner.later {
                        await carry(processor.begin(prepared, of: message, then: ending(of: message, runner)), of: message, runner: runner)
                    }
                    return true
                }
                return
            }
            // Every send slot is taken, and every event here is for this project: wait here, in
            // a shallow frame, not in a send's.
            await processor.waitForRoom(project: project)
            if Task.isCancelled {
                finished(message, EventProcessor.Outcome(verdict: EventVerdict(disposition: .abandoned), done: false))
                return
            }
            begun = processor.begin(prepared, of: message, then: ending(of: message, runner))
        }
        guard case .needsTask(let prepared) = begun else { return }
        finished(message, await runner.waiting { await processor.finish(prepared, of: message) })
    }

    /// Whether `message`'s partition is still this worker's. If not, it was given up while the
    /// event waited: it is the next owner's now, and it was never finished here, so no commit
    /// of ours passed it.
    private func stillHeld(_ message: KafkaMessage) -> Bool {
        if coordinator.holds(message.topicPartition) { return true }
        metrics.eventsInFlight.decrement()
        return false
    }

    /// Where a begun event's end goes: counted at once, or its rest run in a runner.
    private func ending(of message: KafkaMessage, _ runner: RunnerHandle) -> @Sendable (EventProcessor.Ending) -> Void {
        { [self] ending in
            switch ending {
            case .outcome(let outcome): finished(message, outcome)
            case .rest(let rest): runner.later { finished(message, await rest()) }
            }
        }
    }

    /// Records how `message` ended and frees its place.
    private func finished(_ message: KafkaMessage, _ outcome: EventProcessor.Outcome) {
        // Before `finished` frees the slot, so the reader's next admission cannot lift the gauge
        // above max_events_in_flight, even for a moment.
        metrics.eventsInFlight.decrement()
        let finish = coordinator.finished(message, done: outcome.done, source: source, onPauseFailure: pauseFailed)
        if finish.flowChanged { metrics.pausedPartitions.record(coordinator.pausedCount) }
        if outcome.done, let timestamp = message.timestamp {
            metrics.deliveryLag(sinceMilliseconds: timestamp.milliseconds)
        }
        if case .fatal(let why) = outcome.verdict.disposition { pipeline.fail(why) }
    }

    private func pauseFailed(_ error: KafkaError) {
        pipeline.logger.warning("pause/resume failed: \(error)")
    }

    func readFailed(_ error: any Error) {
        pipeline.logger.critical("the consumer failed: \(error)")
    }

    func background() async {
        await pipeline.commitLoop()
    }

    func drain(until deadline: ContinuousClock.Instant) async {
        guard !(await pipeline.waitUntilDrained(nil, timeout: deadline - .now)) else { return }
        pipeline.logger.warning(
            "stopping with events in flight; they are not committed and will be sent again",
            metadata: ["in_flight": "\(coordinator.inFlight)"])
    }

    func dropped(_ count: Int) {
        for _ in 0..<count { metrics.eventsInFlight.decrement() }
    }

    func close() async {
        await pipeline.commitNow(nil)
        // What is still counted in flight (abandoned, or dropped from the queue) was given up:
        // forgotten now, so the revoke that close() runs does not wait for it.
        coordinator.remove(coordinator.partitions)
        await source.close()
    }
}
