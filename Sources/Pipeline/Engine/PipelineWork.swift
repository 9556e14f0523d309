import Kafka

/// A Live Activity push waiting for its lane (``ActivityLanes``).
typealias ParkedActivityPush = (message: KafkaMessage, prepared: EventProcessor.Prepared, lane: ActivityLaneKey)

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
        case .process:
            metrics.eventsInFlight.increment()
            if pipeline.ordersActivities {
                pipeline.activityLanes.withLock { $0.admit(.init(partition: message.partition, offset: message.offset)) }
            }
        case .skipAlreadyDone: metrics.eventsAlreadyDone.increment()
        case .ignore: break
        }
        if admission.flowChanged { metrics.partitionsPaused(coordinator.pausedCount, by: coordinator) }
        return (admission.receipt == .process, admission.full)
    }

    func waitForRoom() async {
        _ = await coordinator.roomFreed.wait { !coordinator.isFull }
    }

    func process(_ message: KafkaMessage, runner: RunnerHandle) async {
        let ordered = pipeline.ordersActivities
        guard stillHeld(message) else {
            if ordered { pass(message, runner) }
            return
        }
        // Begun without a task where it can be (``EventProcessor/begin(_:then:)``): its end
        // comes on the FCM client's thread, and what then needs a task runs in a runner.
        let begun = pipeline.processor.begin(message, orderActivities: ordered, then: ending(of: message, runner))
        guard case .activity(let prepared, let lane, let replaceable, let pause) = begun else {
            if ordered { pass(message, runner) }
            await carry(begun, of: message, runner: runner)
            return
        }
        let position = ActivityLanes<ParkedActivityPush>.Position(partition: message.partition, offset: message.offset)
        let actions = pipeline.activityLanes.withLock {
            $0.arrive(lane, at: position, (message, prepared, lane), replaceable: replaceable, pause: pause)
        }
        act(actions, runner)
    }

    /// An event that is no Live Activity push was rendered: pushes read after it may go on.
    private func pass(_ message: KafkaMessage, _ runner: RunnerHandle) {
        let position = ActivityLanes<ParkedActivityPush>.Position(partition: message.partition, offset: message.offset)
        act(pipeline.activityLanes.withLock { $0.pass(position) }, runner)
    }

    /// Does what the lanes answered: a push goes, or is finished without a send.
    private func act(_ actions: [ActivityLanes<ParkedActivityPush>.Action], _ runner: RunnerHandle) {
        let processor = pipeline.processor
        for action in actions {
            switch action {
            case .go(let push):
                runner.later { [self] in
                    let begun = processor.begin(push.prepared, of: push.message, then: ending(of: push.message, runner, lane: push.lane))
                    await carry(begun, of: push.message, runner: runner, lane: push.lane)
                }
            case .supersede(let push):
                runner.later { [self] in finished(push.message, await processor.supersede(push.prepared, of: push.message), runner) }
            }
        }
    }

    /// The push in flight on `lane` ended: the next one waiting goes, rendered again, so its
    /// `max_age` and `ttl: remaining` are judged when it really leaves.
    private func release(_ lane: ActivityLaneKey, _ runner: RunnerHandle) {
        // `min_interval`: the lane stays closed a while; what arrives meanwhile waits (and newer
        // updates replace older ones).
        if let pause = pipeline.activityLanes.withLock({ $0.pause(lane) }) {
            runner.later { [self] in
                try? await Task.sleep(for: pause)
                open(lane, runner)
            }
        } else {
            open(lane, runner)
        }
    }

    /// The next push waiting on `lane` goes, or the lane is free.
    private func open(_ lane: ActivityLaneKey, _ runner: RunnerHandle) {
        guard let next = pipeline.activityLanes.withLock({ $0.finish(lane) }) else { return }
        runner.later { [self] in
            // Its partition given up meanwhile: the next owner sends it; the lane moves on.
            guard stillHeld(next.message) else { return open(lane, runner) }
            let processor = pipeline.processor
            let prepared = processor.renderedAgain(next.prepared, of: next.message) ?? next.prepared
            await carry(
                processor.begin(prepared, of: next.message, then: ending(of: next.message, runner, lane: lane)), of: next.message, runner: runner,
                lane: lane)
        }
    }

    /// Takes an event on from where ``EventProcessor/begin(_:then:)`` left it; `lane`: the
    /// Live Activity lane it holds, released when it ends.
    private func carry(_ begun: EventProcessor.Begun, of message: KafkaMessage, runner: RunnerHandle, lane: ActivityLaneKey? = nil) async {
        let processor = pipeline.processor
        var begun = begun
        while case .full(let prepared, let project) = begun {
            if processor.sendsForSeveralProjects {
                // Another project's events may be queued behind this one, and their sends may
                // have room: set this one aside, without a task, until its project has room.
                processor.whenRoom(project: project) { [self] in
                    // Its partition given up meanwhile: the room passes to the next event.
                    guard stillHeld(message) else {
                        if let lane { release(lane, runner) }
                        return false
                    }
                    runner.later {
                        await carry(
                            processor.begin(prepared, of: message, then: ending(of: message, runner, lane: lane)), of: message, runner: runner,
                            lane: lane)
                    }
                    return true
                }
                return
            }
            // Every send slot is taken, and every event here is for this project: wait here, in
            // a shallow frame, not in a send's.
            await processor.waitForRoom(project: project)
            if Task.isCancelled {
                finished(message, EventProcessor.Outcome(verdict: EventVerdict(disposition: .abandoned), done: false), runner, lane: lane)
                return
            }
            begun = processor.begin(prepared, of: message, then: ending(of: message, runner, lane: lane))
        }
        guard case .needsTask(let prepared) = begun else { return }
        finished(message, await runner.waiting { await processor.finish(prepared, of: message) }, runner, lane: lane)
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
    private func ending(
        of message: KafkaMessage, _ runner: RunnerHandle, lane: ActivityLaneKey? = nil
    ) -> @Sendable (EventProcessor.Ending) -> Void {
        { [self] ending in
            switch ending {
            case .outcome(let outcome): finished(message, outcome, runner, lane: lane)
            case .rest(let rest): runner.later { finished(message, await rest(), runner, lane: lane) }
            }
        }
    }

    /// Records how `message` ended and frees its place (and its Live Activity lane).
    private func finished(_ message: KafkaMessage, _ outcome: EventProcessor.Outcome, _ runner: RunnerHandle, lane: ActivityLaneKey? = nil) {
        if let lane { release(lane, runner) }
        // Before `finished` frees the slot, so the reader's next admission cannot lift the gauge
        // above max_events_in_flight, even for a moment.
        metrics.eventsInFlight.decrement()
        let finish = coordinator.finished(message, done: outcome.done, source: source, onPauseFailure: pauseFailed)
        if finish.flowChanged { metrics.partitionsPaused(coordinator.pausedCount, by: coordinator) }
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

    func background(_ runner: RunnerHandle) async {
        guard let rules = pipeline.processor.rules else { return await pipeline.commitLoop() }
        await withDiscardingTaskGroup { group in
            group.addTask { await pipeline.commitLoop() }
            group.addTask {
                do {
                    try await rules.run()
                } catch is CancellationError {
                } catch {
                    pipeline.logger.critical("the rules engine stopped: \(error)")
                    pipeline.fail("rules engine: \(error)")
                }
            }
        }
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
