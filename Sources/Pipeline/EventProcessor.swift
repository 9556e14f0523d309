import FCM
import Kafka
import Logging
import Mapping

/// Takes one event from Kafka record to *done*: render, send every message, write the
/// dead-letter and token-invalidation records it calls for, and wait until Kafka has them.
public struct EventProcessor: Sendable {
    public struct Options: Sendable {
        public var deadLetterTopic: String
        public var tokenInvalidationTopic: String
        /// FCM's dry run: validated, not delivered.
        public var validateOnly = false
        /// Unmapped event types are done without a send (otherwise dead-lettered).
        public var skipUnknownEventTypes = true
        /// `.ignore` sends events older than their mapping's `max_age` too
        /// (`replay --ignore-max-age`).
        public var maxAge = MaxAgeCheck.enforce

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
    let options: Options
    let metrics: PipelineMetrics
    let logger: Logger

    public init(
        mappings: MappingSet, sender: any PushSending, producer: any RecordProducing,
        options: Options, metrics: PipelineMetrics, logger: Logger
    ) {
        self.mappings = mappings
        self.sender = sender
        self.producer = producer
        self.options = options
        self.metrics = metrics
        self.logger = logger
    }

    public func process(_ message: KafkaMessage) async -> Outcome {
        let record = EventRecord(message)
        var eventType: String?
        var eventID: String?
        /// The Firebase project the event's messages went to, once it has one.
        var projectID: String?
        let verdict: EventVerdict
        switch mappings.render(record, maxAge: options.maxAge) {
        case .failure(let failure):
            if case .tooOld(let old) = failure {  // decoded, unlike most failures: its record can say what it was
                eventType = old.eventType
                eventID = old.eventID
            }
            verdict = .mappingFailed(failure, skipUnknownTypes: options.skipUnknownEventTypes)
        case .success(let rendered):
            eventType = rendered.event.type
            eventID = rendered.event.id
            if let id = sender.projectID(of: rendered.project) {
                projectID = id
                verdict = .sends(await sendAll(rendered.messages, project: rendered.project, projectID: id))
            } else {
                verdict = .unknownProject(rendered.project)
            }
        }

        let now = RFC3339.nowMilliseconds()
        for invalidation in verdict.invalidations {
            let out = OutputRecords.tokenInvalidation(
                invalidation, topic: options.tokenInvalidationTopic, source: message,
                eventType: eventType, eventID: eventID, project: projectID, nowMilliseconds: now)
            guard await write(out, for: message) else { return Outcome(verdict: verdict, done: false) }
            metrics.tokenInvalidated(code: invalidation.code.name)
        }
        switch verdict.disposition {
        case .delivered:
            metrics.eventsDelivered.increment()
        case .skipped:
            metrics.eventsSkipped.increment()
        case .deadLetter(let reason):
            let out = OutputRecords.deadLetter(
                message, reason: reason, topic: options.deadLetterTopic,
                eventType: eventType, eventID: eventID, project: projectID, nowMilliseconds: now)
            guard await write(out, for: message) else { return Outcome(verdict: verdict, done: false) }
            metrics.deadLettered(code: reason.code)
            logger.warning(
                "dead-lettered",
                metadata: [
                    "source": "\(message.topic)/\(message.partition)/\(message.offset)",
                    "reason_code": "\(reason.code)", "reason": "\(reason.reason)",
                ])
        case .fatal(let why):
            logger.critical("cannot send: \(why)")
            return Outcome(verdict: verdict, done: false)
        case .abandoned:
            return Outcome(verdict: verdict, done: false)
        }
        // Once done, so an event retried after a failed write is counted once.
        if verdict.tooOld, let eventType { metrics.tooOld(eventType: eventType) }
        return Outcome(verdict: verdict, done: true)
    }

    /// - Parameters:
    ///   - project: the name the mapping chose (nil: the default project);
    ///   - projectID: its Firebase project ID, for the metrics.
    private func sendAll(
        _ messages: [FCMMessage], project: String?, projectID: String
    ) async -> [(message: FCMMessage, result: FCMClient.SendResult)] {
        if messages.count == 1 { return [(messages[0], await send(messages[0], project: project, projectID: projectID))] }
        return await withTaskGroup(of: (Int, FCMClient.SendResult).self) { group in
            for (i, m) in messages.enumerated() {
                group.addTask { (i, await send(m, project: project, projectID: projectID)) }
            }
            var results = [FCMClient.SendResult?](repeating: nil, count: messages.count)
            for await (i, r) in group { results[i] = r }
            return messages.indices.map { (messages[$0], results[$0]!) }
        }
    }

    private func send(_ message: FCMMessage, project: String?, projectID: String) async -> FCMClient.SendResult {
        metrics.sendStarted()
        let start = ContinuousClock.now
        let result = await sender.send(message.encoded, project: project, to: SendTarget(message.target), validateOnly: options.validateOnly)
        metrics.sendFinished(
            result.outcome, project: projectID, attempts: result.attempts, quotaRefusals: result.quotaRefusals, duration: .now - start)
        if case .failure(let error) = result.outcome, let device = message.device, error.invalidatesToken {
            logger.info("device refused", metadata: [message.target.kind.rawValue: "\(device)", "code": "\(error.code)"])
        }
        return result
    }

    /// Writes `record` until Kafka acknowledges it, backing off between failures. Gives up only
    /// when the task is cancelled (the worker is stopping), leaving the event unfinished.
    private func write(_ record: KafkaProducerRecord, for source: KafkaMessage) async -> Bool {
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                _ = try await producer.send(record)
                return true
            } catch {
                metrics.recordWriteErrors.increment()
                logger.error(
                    "cannot write to \(record.topic), will retry",
                    metadata: [
                        "source": "\(source.topic)/\(source.partition)/\(source.offset)", "error": "\(error)",
                    ])
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(5))
            }
        }
        return false
    }
}

extension FCMError: CodedError {
    var metricCode: String { code.name }
}

extension SendTarget {
    /// The FCM client's view of a rendered message's target.
    init(_ target: MessageTarget) {
        let kind: SendTarget.Kind =
            switch target.kind {
            case .fid: .fid
            case .token: .token
            case .topic: .topic
            case .condition: .condition
            }
        self.init(kind, target.value)
    }
}

extension EventRecord {
    /// The mapping core's view of a Kafka record.
    public init(_ message: KafkaMessage) {
        self.init(
            value: message.value, headers: message.headers.map { ($0.name, $0.value) },
            topic: message.topic, partition: message.partition, offset: message.offset, timestamp: message.timestamp?.milliseconds)
    }
}
