import FCM
import Kafka
import Mapping

// An event's outcome records (`topics.outcomes`, docs/operations.md#outcome-records): one per
// push, or one for an event that sent none.
extension EventProcessor {
    /// The event's outcome records: one per send, or one for an event that sent none, and one
    /// per push or device a rule withheld. None without an outcome topic.
    func outcomeRecords(
        _ message: KafkaMessage, _ verdict: EventVerdict, _ facts: EventFacts, results: [(message: FCMMessage, result: FCMClient.SendResult)],
        now: Int64
    ) -> [(PushOutcome, KafkaProducerRecord)] {
        guard let topic = options.outcomeTopic else { return [] }
        var deadLetter: DeadLetterReason?
        var outcomes: [(PushOutcome, (message: FCMMessage, projectID: String)?, attempts: Int)] = []
        switch verdict.disposition {
        case .deadLetter(let reason): deadLetter = reason
        case .skipped(let reason) where facts.rules.withheld.isEmpty:
            outcomes.append((.skipped(reasonCode: verdict.skipCode ?? "skipped", reason: reason), nil, 0))
        case .deferred(let due): outcomes.append((.deferred(due: due), nil, 0))
        case .skipped, .delivered, .fatal, .abandoned: break
        }
        if results.isEmpty, let deadLetter {
            outcomes.append((.deadLettered(reasonCode: deadLetter.code, reason: deadLetter.reason), nil, deadLetter.attempts))
        }
        for (sent, result) in results {
            let projectID = facts.sent.first { $0.message.target == sent.target }?.projectID ?? ""
            outcomes.append((PushOutcome.of(result, target: sent.target, deadLetter: deadLetter), (sent, projectID), result.attempts))
        }
        let records: [(PushOutcome, KafkaProducerRecord)] = outcomes.map { outcome, push, attempts in
            (
                outcome,
                OutputRecords.outcome(
                    outcome, topic: topic, source: message, eventType: facts.eventType, eventID: facts.eventID, push: push, user: facts.user,
                    variant: facts.variant, attempts: attempts, nowMilliseconds: now, traceParent: facts.traceParent ?? Self.traceParent(of: message))
            )
        }
        return records + withheldOutcomes(message, facts, now: now)
    }

    /// Writes the event's outcome records, each acknowledged before the next. False when one
    /// could not be written before the worker stopped.
    func writeOutcomes(
        _ message: KafkaMessage, _ verdict: EventVerdict, _ facts: EventFacts, results: [(message: FCMMessage, result: FCMClient.SendResult)],
        now: Int64
    ) async -> Bool {
        for (outcome, record) in outcomeRecords(message, verdict, facts, results: results, now: now) {
            guard await write(record, for: message) else { return false }
            metrics.outcomeRecord(result: outcome.name)
        }
        return true
    }

    /// Ends a begun event whose one send was delivered and whose only record is its outcome
    /// record without a task: the record goes to the producer with a delivery callback, and
    /// `then` gets the event done once Kafka acknowledged it (on the producer's thread), or the
    /// rest for a task if the record failed (written again there, with retries). False when it
    /// cannot: another record is due, or the producer has no callbacks (a fake) or refused the
    /// record now (its queue full): then the caller takes the task path.
    ///
    /// The task path costs a task and a continuation per event, about half of what outcome
    /// records cost per event (docs/benchmarks.md, outcome records).
    func endWithOutcomeRecord(
        _ message: KafkaMessage, _ prepared: Prepared, _ verdict: EventVerdict, results: [(message: FCMMessage, result: FCMClient.SendResult)],
        then: @escaping @Sendable (Ending) -> Void
    ) -> Bool {
        let records = outcomeRecords(message, verdict, prepared.facts, results: results, now: options.clock.nowMilliseconds())
        guard verdict.invalidations.isEmpty, records.count == 1, let (outcome, record) = records.first else { return false }
        return producer.start(record) { [self] delivery in
            switch delivery {
            case .success:
                metrics.outcomeRecord(result: outcome.name)
                let facts = prepared.facts
                let done = counted(verdict, eventType: facts.eventType, variant: facts.variant, rules: facts.rules)
                then(.outcome(traced(done, prepared.trace, message)))
            case .failure:
                metrics.recordWriteErrors.increment()
                then(.rest { [self] in traced(await conclude(message, verdict, prepared.facts, results: results), prepared.trace, message) })
            }
        }
    }
}
