import Dates
import EventTracing
import FCM
import Kafka
import Logging
import Mapping
import Rules

/// Takes one event from Kafka record to *done*: render, send every message, write the
/// dead-letter and token-invalidation records it calls for, and wait until Kafka has them.
public final class EventProcessor: Sendable {
    public struct Options: Sendable {
        public var deadLetterTopic: String
        public var tokenInvalidationTopic: String
        /// FCM's dry run: validated, not delivered.
        public var validateOnly = false
        /// Unmapped event types are done without a send (otherwise dead-lettered).
        public var skipUnknownEventTypes = true
        /// A `user` target whose user has no device is done without a send (otherwise
        /// dead-lettered; `registry.no_devices`).
        public var skipUsersWithoutDevices = true
        /// `.ignore` sends events older than their mapping's `max_age` too
        /// (`replay --ignore-max-age`).
        public var maxAge = MaxAgeCheck.enforce
        /// How each topic's values are read (`kafka.value_formats`); a topic not named: `auto`.
        public var valueFormats: [String: ValueFormat] = [:]
        /// One record per push, or per event that sent none (`topics.outcomes`); nil: none.
        public var outcomeTopic: String?
        /// The wall clock events are judged by (`max_age`, `apns-expiration`, quiet hours) and
        /// records are stamped with: the system's, or a test's (`PUSHBRIDGE_TEST_CLOCK`, debug builds).
        public var clock: any WallClock = SystemWallClock()
        /// Re-key mode's stage 1 (docs/rules.md#caps-and-dedup): events of mappings with `cap`
        /// or `dedup` go to this by-subject topic instead of being sent here; nil: none.
        public var rekeyTopic: String?
        /// Re-key mode's stage 2: a record's `pushbridge-source` header gives its coordinates.
        public var sourceFromHeader = false
        /// Where pushes with a later `send_at` wait (`timers.*`); nil: they are skipped as
        /// `timer_not_armed` (a replay, unless told to re-arm them).
        public var timers: TimerOptions?

        public init(deadLetterTopic: String, tokenInvalidationTopic: String) {
            self.deadLetterTopic = deadLetterTopic
            self.tokenInvalidationTopic = tokenInvalidationTopic
        }
    }

    /// How one event ended.
    public struct Outcome: Sendable {
        public var verdict: EventVerdict
        /// The event is done and may be committed past. False only when a record could not be
        /// written before the worker stopped, or the verdict is fatal.
        public var done: Bool
    }

    let mappings: MappingSet
    let sender: any PushSending
    let producer: any RecordProducing
    /// Users' devices, for `user` targets; nil: no registry.
    let directory: (any DeviceDirectory)?
    /// ``directory``'s lookup, made once.
    let lookup: MappingSet.UserLookup?
    /// Writer schemas of Schema Registry records, by the topics' value formats.
    public let schemas: RecordSchemas
    let options: Options
    let metrics: PipelineMetrics
    let logger: Logger
    /// Failures that repeat for as long as Kafka is down (record writes), as incidents.
    public let failures: LogSummary
    /// Traces sampled events (`tracing.*`); nil: tracing is off, and costs nothing.
    public let tracer: PushTracer?
    /// Decides the events of mappings with `cap` or `dedup`; nil: no mapping has them.
    public let rules: (any StatefulRulesEngine)?
    /// How long after its reservation a capped or deduplicated push may still go out
    /// (``StatefulPush/policy``).
    let rulesPolicy = StatefulPush.policy

    /// - Parameter failures: the process's ``LogSummary`` (default: one of its own on `logger`).
    /// - Parameter tracer: traces sampled events; the commits that end their spans are the
    ///   pipeline's (a replay's processor has none).
    public init(
        mappings: MappingSet, sender: any PushSending, producer: any RecordProducing, directory: (any DeviceDirectory)? = nil,
        schemas: (any SchemaSource)? = nil, options: Options, metrics: PipelineMetrics, logger: Logger, failures: LogSummary? = nil,
        tracer: PushTracer? = nil, rules: (any StatefulRulesEngine)? = nil
    ) {
        self.rules = rules
        self.mappings = mappings
        self.schemas = RecordSchemas(source: schemas, valueFormats: options.valueFormats)
        self.sender = sender
        self.producer = producer
        self.directory = directory
        if let directory {
            self.lookup = { @Sendable user throws -> UserRecord in try directory.record(ofUser: user) }
        } else {
            self.lookup = nil
        }
        self.options = options
        self.metrics = metrics
        self.logger = logger
        self.failures = failures ?? LogSummary(logger: logger)
        self.tracer = tracer
    }

    public func process(_ message: KafkaMessage) async -> Outcome {
        await process(message, firing: nil)
    }

    /// - Parameters:
    ///   - timer: the timer record whose due time came (``fire(_:cancelled:)``), for how often
    ///     quiet hours deferred it already; nil for an event read from its topic.
    ///   - cancelled: the cancellation that covers that timer: rendered for its records, not sent.
    func process(_ message: KafkaMessage, firing timer: TimerRecord?, cancelled: TimerCancel? = nil) async -> Outcome {
        // An event processed here (a replay's; a worker's that could not be begun without a
        // task) waits in this frame while FCM answers: what lives across the sends is kept to
        // the message and the rendered event; rendering and the records an event ends with are
        // functions of their own (2,960 bytes of frame per event before, docs/benchmarks.md).
        let record = eventRecord(message)
        let schema = await schemas.writerSchema(of: record)
        let trace = tracer.flatMap { EventTrace.begin(message, tracer: $0) }
        var facts = EventFacts()
        let planned = traced(trace, &facts) { self.plan(record, schema, &$0, firing: timer, cancelled: cancelled) }
        return await sendAndConclude(Prepared(plan: planned, facts: facts, trace: trace), of: message)
    }

    /// What an event's records need to say of it, once it is rendered.
    struct EventFacts: Sendable {
        var eventType: String?
        var eventID: String?
        /// Each message with the Firebase project ID it was sent with, once the event has them.
        var sent: [(message: FCMMessage, projectID: String)] = []
        var user: String?
        /// The variant the event took, for an event type with variants (its name, or `#2`).
        var variant: String?
        /// The `traceparent` of the event's own span, when it is traced.
        var traceParent: String?
        /// Pushes and devices the user's rules withheld (docs/rules.md), and the rules a
        /// critical push bypassed.
        var rules = RuleFacts()
    }

    enum Plan: Sendable {
        case verdict(EventVerdict)
        /// Send ``EventFacts/sent``.
        case send
        /// Send ``EventFacts/sent`` as the owner of the event's state partition decides (`cap`, `dedup`).
        indirect case stateful(StatefulPlan)
        /// Written to the by-subject topic keyed by this subject (re-key mode's stage 1).
        case rekey(subject: String, topic: String)
        /// Written to the timer topic, to be sent at its due time; `redefers`: how often quiet
        /// hours deferred it before.
        case schedule(Deferral, redefers: Int)
        /// Joins its key's digest window at the owner of its state partition (`digest`).
        indirect case digest(DigestPlan)
    }

    /// Writes the records `verdict` calls for and counts the event: done, or not when a write
    /// could not be made before the worker stopped.
    ///
    /// - Parameter results: the sends' results, for outcome records.
    @inline(never)
    func conclude(
        _ message: KafkaMessage, _ verdict: EventVerdict, _ facts: EventFacts,
        results: [(message: FCMMessage, result: FCMClient.SendResult)] = []
    ) async -> Outcome {
        let (eventType, eventID, sent, user) = (facts.eventType, facts.eventID, facts.sent, facts.user)
        let now = options.clock.nowMilliseconds()
        for invalidation in verdict.invalidations {
            // The user whose device it is: the event's, or for several pushes the push's.
            let owner = sent.first { $0.message.target.value == invalidation.device }?.message.push?.user ?? user
            let out = OutputRecords.tokenInvalidation(
                invalidation, topic: options.tokenInvalidationTopic, source: message,
                eventType: eventType, eventID: eventID, project: sent.first { $0.message.target.value == invalidation.device }?.projectID,
                user: owner, nowMilliseconds: now)
            guard await write(out, for: message) else { return Outcome(verdict: verdict, done: false) }
            metrics.tokenInvalidated(code: invalidation.code.name)
            // A registry device FCM says is dead leaves the local view now; the backend deletes
            // it at the source from the record just written. SENDER_ID_MISMATCH is not dead: the
            // device is another project's app (its registry `app` may be wrong), so it stays; nor
            // is a device whose Live Activity token died, unless the token came from the activity's
            // registry entry, which the device leaves.
            let dropped = invalidation.liveActivity.map(\.fromRegistry) ?? true
            if let owner, let directory, invalidation.code != .senderIDMismatch, let activity = invalidation.liveActivity,
                activity.pushToStartType != nil
            {
                await directory.dropPushToStart(activity.token, ofUser: owner)
            } else if let owner, let directory, invalidation.code != .senderIDMismatch, dropped {
                await directory.drop(invalidation.device, ofUser: owner)
            }
        }
        if case .fatal = verdict.disposition {
        } else if verdict.disposition != .abandoned {
            guard await writeOutcomes(message, verdict, facts, results: results, now: now) else { return Outcome(verdict: verdict, done: false) }
        }
        switch verdict.disposition {
        case .delivered, .skipped, .deferred:
            return counted(verdict, eventType: eventType, variant: facts.variant, rules: facts.rules)
        case .deadLetter(let reason):
            let out = OutputRecords.deadLetter(
                message, reason: reason, topic: options.deadLetterTopic,
                eventType: eventType, eventID: eventID, project: Self.projectIDs(sent), nowMilliseconds: now, traceParent: facts.traceParent)
            guard await write(out, for: message) else { return Outcome(verdict: verdict, done: false) }
            metrics.deadLettered(code: reason.code)
            var metadata: Logger.Metadata = [
                "source": "\(message.topic)/\(message.partition)/\(message.offset)",
                "reason_code": "\(reason.code)", "reason": "\(reason.reason)",
            ]
            if let variant = facts.variant { metadata["variant"] = "\(variant)" }
            logger.warning("dead-lettered", metadata: metadata)
        case .fatal(let why):
            logger.critical("cannot send: \(why)")
            return Outcome(verdict: verdict, done: false)
        case .abandoned:
            return Outcome(verdict: verdict, done: false)
        }
        return counted(verdict, eventType: eventType, variant: facts.variant, rules: facts.rules)
    }

    /// Counts a verdict whose records (if any) are written: the event is done.
    func counted(_ verdict: EventVerdict, eventType: String?, variant: String? = nil, rules: RuleFacts = .init()) -> Outcome {
        switch verdict.disposition {
        case .delivered: metrics.eventsDelivered.increment()
        case .skipped: metrics.eventsSkipped.increment()
        case .deferred: metrics.eventsDeferred.increment()
        case .deadLetter, .fatal, .abandoned: break  // dead-lettered: counted with its record
        }
        // Once done, so an event retried after a failed write is counted once.
        if verdict.tooOld, let eventType { metrics.tooOld(eventType: eventType) }
        if verdict.noDevices { metrics.usersWithoutDevices.increment() }
        if verdict.unmatched, let eventType { metrics.unmatched(eventType: eventType) }
        if let variant, let eventType { metrics.variant(eventType: eventType, variant: variant) }
        if let eventType {
            for w in rules.withheld { metrics.withheld(rule: w.rule.rawValue, eventType: eventType) }
            for rule in rules.bypassed { metrics.bypassed(rule: rule.rawValue, eventType: eventType) }
        }
        return Outcome(verdict: verdict, done: true)
    }

    /// The Firebase project IDs an event's messages went to, for its dead-letter record; nil
    /// when it sent nothing.
    static func projectIDs(_ sent: [(message: FCMMessage, projectID: String)]) -> String? {
        guard let first = sent.first?.projectID else { return nil }
        if sent.allSatisfy({ $0.projectID == first }) { return first }
        return Set(sent.map(\.projectID)).sorted().joined(separator: ",")
    }

    /// A project named where the config has none.
    struct UnknownProject: Error {
        var name: String?
    }

    /// Each message with the Firebase project ID it goes to: its device's app's project, else
    /// the event's. A project the config lacks named by the event (or its mapping) fails the
    /// event (nothing is sent); a registry device naming an app the config lacks is left out,
    /// logged and counted (bad registry data should not cost the user's other devices).
    func projects(of rendered: MappingSet.Rendered) -> Result<[(message: FCMMessage, projectID: String)], UnknownProject> {
        var sends: [(message: FCMMessage, projectID: String)] = []
        sends.reserveCapacity(rendered.messages.count)
        for var message in rendered.messages {
            let name = message.project ?? message.push?.project ?? rendered.project
            let user = message.push?.user ?? rendered.user
            guard let id = sender.projectID(of: name) else {
                guard message.project != nil, user != nil else { return .failure(UnknownProject(name: name)) }
                metrics.devicesWithUnknownApp.increment()
                logger.warning(
                    "a registry device names an app that is not one of fcm.projects: not sent to",
                    metadata: ["user": "\(user ?? "")", "app": "\(name ?? "")", "device": "…\(message.target.value.suffix(6))"])
                continue
            }
            message.project = name
            sends.append((message, id))
        }
        return .success(sends)
    }

    /// - Parameter deadline: no attempt of any send starts at or after it (``PushSending/send(_:project:to:validateOnly:recordingAttempts:deadline:)``).
    @inline(never)
    func sendAll(
        _ sends: [(message: FCMMessage, projectID: String)], trace: EventTrace?, deadline: ContinuousClock.Instant? = nil
    ) async -> [(message: FCMMessage, result: FCMClient.SendResult)] {
        if sends.count == 1 {
            return [(sends[0].message, await send(sends[0].message, projectID: sends[0].projectID, trace: trace, deadline: deadline))]
        }
        return await withTaskGroup(of: (Int, FCMClient.SendResult).self) { group in
            for (i, s) in sends.enumerated() {
                group.addTask { (i, await self.send(s.message, projectID: s.projectID, trace: trace, deadline: deadline)) }
            }
            var results = [FCMClient.SendResult?](repeating: nil, count: sends.count)
            for await (i, r) in group { results[i] = r }
            return sends.indices.map { (sends[$0].message, results[$0]!) }
        }
    }

    /// - Parameter projectID: the Firebase project ID of `message.project`, for the metrics.
    private func send(
        _ message: FCMMessage, projectID: String, trace: EventTrace?, deadline: ContinuousClock.Instant?
    ) async -> FCMClient.SendResult {
        metrics.sendStarted()
        let start = ContinuousClock.now
        let result = await sender.send(
            message.encoded, project: message.project, to: message.target, validateOnly: options.validateOnly, recordingAttempts: trace != nil,
            deadline: deadline)
        record(result, of: message, projectID: projectID, started: start)
        trace?.sent(result, project: projectID)
        return result
    }

    /// Counts a send's result, outside ``send(_:projectID:)``'s frame, which waits while FCM answers.
    @inline(never)
    func record(_ result: FCMClient.SendResult, of message: FCMMessage, projectID: String, started: ContinuousClock.Instant) {
        metrics.sendFinished(
            result.outcome, project: projectID, attempts: result.attempts, quotaRefusals: result.quotaRefusals, duration: .now - started)
        if case .failure(let error) = result.outcome, let device = message.device, error.invalidatesToken {
            logger.info("device refused", metadata: [message.target.kind.rawValue: "\(device)", "code": "\(error.code)", "project": "\(projectID)"])
        }
    }

    /// Writes `record` until Kafka acknowledges it, backing off between failures. Gives up only
    /// when the task is cancelled (the worker is stopping), leaving the event unfinished.
    func write(_ record: KafkaProducerRecord, for source: KafkaMessage) async -> Bool {
        await producer.writeUntilAcknowledged(record) { error in
            metrics.recordWriteErrors.increment()
            failures.log(
                .error, "cannot write to \(record.topic), will retry", kind: "write \(record.topic)",
                metadata: [
                    "source": "\(source.topic)/\(source.partition)/\(source.offset)", "error": "\(error)",
                ])
        }
    }
}

extension FCMError: CodedError {
    var metricCode: String { code.name }
}

extension EventRecord {
    /// The mapping core's view of a Kafka record.
    public init(_ message: KafkaMessage) {
        self.init(
            value: message.value, headers: message.headers.map { ($0.name, $0.value) },
            topic: message.topic, partition: message.partition, offset: message.offset, timestamp: message.timestamp?.milliseconds)
    }
}
