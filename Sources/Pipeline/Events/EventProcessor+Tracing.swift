import EventTracing
import FCM
import Kafka

/// An event's spans (``EventTrace``), where the processor takes it: rendered, each attempt of
/// each send, done (then committed) or not. Nothing here runs for an event that is not traced.
extension EventProcessor {
    /// Renders with `plan`, timed as the trace's `render` span, and notes the trace's
    /// `traceparent` for the event's records.
    @inline(__always)
    func traced(_ trace: EventTrace?, _ facts: inout EventFacts, _ plan: (inout EventFacts) -> Plan) -> Plan {
        guard let trace else { return plan(&facts) }
        let start = ContinuousClock.now
        let planned = plan(&facts)
        trace.rendered(from: start, to: .now, eventType: facts.eventType, eventID: facts.eventID)
        facts.traceParent = trace.traceParent
        return planned
    }

    /// `outcome`, after telling the trace: done (its root ends with the commit past it) or not.
    @inline(__always)
    func traced(_ outcome: Outcome, _ trace: EventTrace?, _ message: KafkaMessage) -> Outcome {
        guard let trace else { return outcome }
        if outcome.done {
            trace.done(outcome.verdict.disposition.traceName, topic: message.topic, partition: message.partition, offset: message.offset)
        } else {
            trace.notDone(outcome.verdict.disposition.traceName)
        }
        return outcome
    }

    /// The `traceparent` an untraced event came with, for its outcome records: the header,
    /// CloudEvents' `ce_traceparent`, or a structured CloudEvent's attribute.
    static func traceParent(of message: KafkaMessage) -> String? {
        TraceHeaders.traceParentValue(in: message.headers) ?? TraceHeaders.structured(message.value)?.parent
    }
}

extension EventTrace {
    /// A span per attempt of a send whose attempts were recorded.
    func sent(_ result: FCMClient.SendResult, project: String) {
        for (number, attempt) in (result.attemptLog ?? []).enumerated() {
            switch attempt.outcome {
            case .success(let name):
                self.attempt(number + 1, project: project, started: attempt.started, ended: attempt.ended, messageName: name, error: nil)
            case .failure(let error):
                self.attempt(
                    number + 1, project: project, started: attempt.started, ended: attempt.ended, messageName: nil,
                    error: (error.code.name, error.httpStatus, error.description))
            }
        }
    }
}

extension EventVerdict.Disposition {
    /// As a trace says it (`pushbridge.outcome`).
    var traceName: String {
        switch self {
        case .delivered: "delivered"
        case .skipped: "skipped"
        case .deadLetter: "dead_letter"
        case .fatal: "fatal"
        case .abandoned: "abandoned"
        case .deferred: "deferred"
        }
    }
}
