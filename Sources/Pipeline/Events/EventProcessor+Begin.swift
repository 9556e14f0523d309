import EventTracing
import FCM
import Kafka
import Mapping

/// An event begun without a task waiting on it.
///
/// With thousands of sends in flight, a task per send waiting for FCM's answer holds its whole
/// call chain's frames (docs/benchmarks.md). Most events need nothing else:
/// they render at once, make one send, and FCM acknowledges it. ``EventProcessor/begin(_:then:)``
/// starts that send and returns; the end comes through `then` on the FCM client's thread. The
/// rest, which may wait (a schema to fetch, several sends, a throttled target, a retry's
/// backoff, the records an event ends with), runs in a task, as ``EventProcessor/process(_:)``
/// runs every step:
///
/// ```swift
/// switch processor.begin(message, then: { ending in … }) {
/// case .sending: break                                  // `then` gets .outcome, or .rest for a task
/// case .full(let prepared, let project): …              // waitForRoom(project:) or whenRoom(project:),
///                                                       // then begin(prepared) again
/// case .needsTask(let prepared): … await processor.finish(prepared, of: message)
/// }
/// ```
extension EventProcessor {
    /// An event rendered, not yet sent.
    public struct Prepared: Sendable {
        let plan: Plan
        let facts: EventFacts
        /// Its spans, when it is traced.
        let trace: EventTrace?
    }

    /// How an event begun by ``begin(_:then:)`` ended, told to its `then`.
    public enum Ending: Sendable {
        /// Done or not, and counted: nothing is left to do.
        case outcome(Outcome)
        /// What is left (a retry, the records the event calls for) needs a task.
        case rest(@Sendable () async -> Outcome)
    }

    /// What ``begin(_:then:)`` did.
    public enum Begun: Sendable {
        /// Its send is out; `then` gets how it ends.
        case sending
        /// Every send slot of `project` is taken: ``waitForRoom(project:)`` (or
        /// ``whenRoom(project:_:)``), then begin the prepared event again.
        case full(Prepared, project: String?)
        /// It needs a task: ``finish(_:of:)`` (nil: not rendered yet, its writer schema must be
        /// fetched first).
        case needsTask(Prepared?)
        /// A Live Activity push, rendered, not sent (only when asked to order them): its
        /// activity's lane says when to ``begin(_:of:then:)`` it. `replaceable`: an update
        /// without an alert, which a newer one may replace while it waits.
        case activity(Prepared, lane: ActivityLaneKey, replaceable: Bool, pause: Duration?)
    }

    /// Renders `message` and, when it makes a single send that can go now, begins it.
    /// `then` runs at most once, on the FCM client's thread (or the record producer's, after
    /// an outcome record), only for `.sending`.
    ///
    /// - Parameter orderActivities: a Live Activity push is returned as `.activity`, not sent.
    public func begin(_ message: KafkaMessage, orderActivities: Bool = false, then: @escaping @Sendable (Ending) -> Void) -> Begun {
        let record = eventRecord(message)
        guard let schema = schemas.writerSchemaAtHand(of: record) else { return .needsTask(nil) }
        let trace = tracer.flatMap { EventTrace.begin(message, tracer: $0) }
        var facts = EventFacts()
        let plan = traced(trace, &facts) { self.plan(record, schema, &$0) }
        let prepared = Prepared(plan: plan, facts: facts, trace: trace)
        // One activity's push, to one device or to each following it (its registry entry).
        if orderActivities, case .send = plan, let first = facts.sent.first, let activity = first.message.liveActivity {
            let lane = ActivityLaneKey(project: first.projectID, activity: activity.key)
            return .activity(
                prepared, lane: lane, replaceable: activity.event == .update && !activity.alert,
                pause: activity.minIntervalSeconds.map { .seconds($0) })
        }
        return begin(prepared, of: message, then: then)
    }

    /// Renders a waiting Live Activity push again when its turn comes, so its `max_age` and
    /// `ttl: remaining` are judged when it really leaves; in the same trace. nil: its writer
    /// schema is no longer at hand (then it goes as first rendered).
    func renderedAgain(_ prepared: Prepared, of message: KafkaMessage) -> Prepared? {
        let record = eventRecord(message)
        guard let schema = schemas.writerSchemaAtHand(of: record) else { return nil }
        var facts = EventFacts()
        let plan = traced(prepared.trace, &facts) { self.plan(record, schema, &$0) }
        return Prepared(plan: plan, facts: facts, trace: prepared.trace)
    }

    /// Finishes a Live Activity push a newer one of its activity made pointless, without a
    /// send: skipped (`activity_superseded`), with its outcome record if any.
    func supersede(_ prepared: Prepared, of message: KafkaMessage) async -> Outcome {
        var verdict = EventVerdict(disposition: .skipped(reason: "a newer event of its Live Activity replaced it"))
        verdict.skipCode = "activity_superseded"
        return await conclude(message, verdict, prepared.facts)
    }

    /// Begins a prepared event's send, as ``begin(_:then:)`` does.
    public func begin(_ prepared: Prepared, of message: KafkaMessage, then: @escaping @Sendable (Ending) -> Void) -> Begun {
        guard case .send = prepared.plan, prepared.facts.sent.count == 1 else { return .needsTask(prepared) }
        let (fcmMessage, projectID) = prepared.facts.sent[0]
        // Counted before the send goes: its end may come before `start` returns.
        metrics.sendStarted()
        let started = ContinuousClock.now
        let start = sender.start(
            fcmMessage.encoded, project: fcmMessage.project, to: fcmMessage.target, validateOnly: options.validateOnly,
            recordingAttempts: prepared.trace != nil
        ) { [self] first in
            switch first {
            case .finished(let result):
                ended(message, prepared, result: result, projectID: projectID, started: started, then: then)
            case .unfinished(let rest):
                then(
                    .rest { [self] in
                        let result = await rest()
                        let ending = await withCheckedContinuation { continuation in
                            ended(message, prepared, result: result, projectID: projectID, started: started) { continuation.resume(returning: $0) }
                        }
                        switch ending {
                        case .outcome(let outcome): return outcome
                        case .rest(let rest): return await rest()
                        }
                    })
            }
        }
        switch start {
        case .success: return .sending
        case .failure(let refusal):
            metrics.sendWithdrawn()
            switch refusal {
            case .full: return .full(prepared, project: fcmMessage.project)
            case .mustWait: return .needsTask(prepared)
            }
        }
    }

    /// Returns once `project` has a free send slot, or the task is cancelled.
    public func waitForRoom(project: String?) async {
        await sender.waitForRoom(project: project)
    }

    /// Runs `action` once `project` has a free send slot, with no task waiting (at once if it
    /// has one now, else on the thread that frees it): `action` must be quick, and return
    /// whether it will begin again (false passes the room on).
    public func whenRoom(project: String?, _ action: @escaping @Sendable () -> Bool) {
        sender.whenRoom(project: project, action)
    }

    /// Whether events of several projects pass here: then one whose project has no free slot
    /// is set aside (``whenRoom(project:_:)``) rather than waited for, so the others' go on.
    public var sendsForSeveralProjects: Bool { sender.projectCount > 1 }

    /// Takes an event that needs a task to its end, as ``process(_:)`` does, from where
    /// ``begin(_:then:)`` left it (nil: not rendered yet, so from the start).
    public func finish(_ prepared: Prepared?, of message: KafkaMessage) async -> Outcome {
        guard let prepared else { return await process(message) }
        return await sendAndConclude(prepared, of: message)
    }

    /// Sends a rendered event's messages, if any, and concludes it.
    func sendAndConclude(_ prepared: Prepared, of message: KafkaMessage) async -> Outcome {
        switch prepared.plan {
        case .verdict(let verdict): return traced(await conclude(message, verdict, prepared.facts), prepared.trace, message)
        case .send:
            let results = await sendAll(prepared.facts.sent, trace: prepared.trace)
            return traced(await conclude(message, .sends(results), prepared.facts, results: results), prepared.trace, message)
        case .stateful(let plan):
            guard let rules else { preconditionFailure("a stateful plan is made only with the rules engine") }
            return await sendStateful(plan, prepared, of: message, engine: rules)
        case .rekey(let subject, let topic):
            return traced(await rekey(message, subject: subject, to: topic), prepared.trace, message)
        case .schedule(let deferral, let redefers):
            return traced(await schedule(message, deferral, prepared.facts, redefers: redefers), prepared.trace, message)
        case .digest(let plan):
            guard let rules else { preconditionFailure("a digest plan is made only with the rules engine") }
            return await sendDigest(plan, prepared, of: message, engine: rules)
        }
    }

    /// The end of a begun event's one send, told to `then` once: counted and done at once when
    /// it calls for no record; done when Kafka acknowledged its outcome record, when that is its
    /// only record; otherwise the records are left for a task.
    private func ended(
        _ message: KafkaMessage, _ prepared: Prepared, result: FCMClient.SendResult, projectID: String, started: ContinuousClock.Instant,
        then: @escaping @Sendable (Ending) -> Void
    ) {
        let fcmMessage = prepared.facts.sent[0].message
        record(result, of: fcmMessage, projectID: projectID, started: started)
        prepared.trace?.sent(result, project: projectID)
        let verdict = EventVerdict.sends([(fcmMessage, result)])
        switch verdict.disposition {
        case .delivered where verdict.invalidations.isEmpty && options.outcomeTopic == nil:
            then(
                .outcome(
                    traced(
                        counted(verdict, eventType: prepared.facts.eventType, variant: prepared.facts.variant, rules: prepared.facts.rules),
                        prepared.trace,
                        message)))
        case .abandoned:
            then(.outcome(traced(Outcome(verdict: verdict, done: false), prepared.trace, message)))
        default:
            if case .delivered = verdict.disposition, endWithOutcomeRecord(message, prepared, verdict, results: [(fcmMessage, result)], then: then) {
                return
            }
            then(
                .rest { [self] in
                    traced(await conclude(message, verdict, prepared.facts, results: [(fcmMessage, result)]), prepared.trace, message)
                })
        }
    }
}
