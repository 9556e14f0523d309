import FCM
import Kafka
import Mapping

// The per-user rules (docs/rules.md) in an event's records: what they withheld and bypassed, as
// outcome records and metrics.
extension EventProcessor {
    /// What the per-user rules did to an event, for its outcome records and metrics.
    struct RuleFacts: Sendable {
        var withheld: [(rule: WithholdRule, reason: String, user: String, push: String?, device: UserDevice?)] = []
        var bypassed: [WithholdRule] = []

        init() {}

        init(_ rendered: MappingSet.Rendered) {
            withheld = rendered.withheldPushes.map { ($0.rule, $0.reason, $0.user, $0.push, nil) }
            withheld += rendered.withheldDevices.map { w in
                (w.rule, "device …\(w.device.id.suffix(6)) muted the category", w.user, w.push, w.device)
            }
            bypassed = rendered.bypassed
        }
    }

    /// One outcome record `withheld` per push or device a rule withheld.
    func withheldOutcomes(_ message: KafkaMessage, _ facts: EventFacts, now: Int64) -> [(PushOutcome, KafkaProducerRecord)] {
        guard let topic = options.outcomeTopic else { return [] }
        return facts.rules.withheld.map { w in
            let outcome = PushOutcome.withheld(rule: w.rule.rawValue, reason: w.reason)
            return (
                outcome,
                OutputRecords.outcome(
                    outcome, topic: topic, source: message, eventType: facts.eventType, eventID: facts.eventID, push: nil, user: w.user,
                    variant: facts.variant, attempts: 0, nowMilliseconds: now, traceParent: facts.traceParent ?? Self.traceParent(of: message),
                    pushName: w.push, target: w.device.map { MessageTarget($0.kind, $0.id) })
            )
        }
    }
}
