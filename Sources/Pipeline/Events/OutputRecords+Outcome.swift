import Dates
import FCM
import JSON
import Kafka
import Mapping

/// What became of one push, or of an event that sent none (docs/operations.md, *Outcome
/// records*; schemas/outcome-record.schema.json).
public enum PushOutcome: Sendable, Equatable {
    /// FCM accepted it, naming it `projects/…/messages/…`.
    case sent(messageName: String)
    /// FCM says the device is gone (`UNREGISTERED`, an invalid identifier): an invalidation
    /// record was written.
    case invalidated(fcmError: String)
    /// FCM refused it, or its retries ran out: the event was dead-lettered (`reasonCode`).
    case failed(fcmError: String, reasonCode: String)
    /// The event sent nothing on purpose (an unmapped type, too old, a user without devices).
    case skipped(reasonCode: String, reason: String)
    /// The event sent nothing and was dead-lettered.
    case deadLettered(reasonCode: String, reason: String)
    /// A rule of the user's withheld it (`rule`: muted, device_muted, quiet_hours; docs/rules.md).
    case withheld(rule: String, reason: String)
    /// It waits in the timer topic until `due` (UTC milliseconds, its `send_at`); its send has
    /// an outcome record of its own then.
    case deferred(due: Int64)

    var name: String {
        switch self {
        case .sent: "sent"
        case .invalidated: "invalidated"
        case .failed: "failed"
        case .skipped: "skipped"
        case .deadLettered: "dead_lettered"
        case .withheld: "withheld"
        case .deferred: "deferred"
        }
    }

    /// A send's outcome: how its result reads, given the event's dead-letter reason, if any.
    static func of(_ result: FCMClient.SendResult, target: MessageTarget, deadLetter: DeadLetterReason?) -> PushOutcome {
        switch result.outcome {
        case .success(let name): return .sent(messageName: name)
        case .failure(let error):
            if error.onlyInvalidates(target) { return .invalidated(fcmError: error.code.name) }
            return .failed(fcmError: error.code.name, reasonCode: deadLetter?.code ?? "fcm_" + error.code.name.lowercased())
        }
    }
}

extension OutputRecords {
    /// A device identifier kept to its last 8 characters; a topic or a condition whole.
    static func shown(_ target: MessageTarget) -> String {
        target.isDevice ? "…" + String(target.value.suffix(8)) : target.value
    }

    /// Trace state headers copied from the event to its outcome records (W3C Trace Context).
    static let traceStateHeaders: Set<String> = ["tracestate", "ce_tracestate"]

    /// One outcome record: a JSON object keyed by the event ID (else its source coordinates).
    /// A device identifier is kept to its last 8 characters: enough to tell a user's devices
    /// apart, not enough to send to one. `traceParent` (the event's span's, or the one it came
    /// with) is a member and the `traceparent` header, with the event's `tracestate`.
    public static func outcome(
        _ outcome: PushOutcome, topic: String, source: KafkaMessage, eventType: String?, eventID: String?,
        push: (message: FCMMessage, projectID: String)?, user: String?, variant: String? = nil, attempts: Int, nowMilliseconds: Int64,
        traceParent: String? = nil, pushName: String? = nil, target: MessageTarget? = nil
    ) -> KafkaProducerRecord {
        let coordinates = "\(source.topic)/\(source.partition)/\(source.offset)"
        var members: [(key: String, value: JSONValue)] = [("result", .string(outcome.name)), ("source", .string(coordinates))]
        if let eventID { members.append(("event_id", .string(eventID))) }
        if let eventType { members.append(("event_type", .string(eventType))) }
        if let user = user ?? push?.message.push?.user { members.append(("user", .string(user))) }
        if let variant = push?.message.push?.variant ?? variant { members.append(("variant", .string(variant))) }
        if let name = push?.message.push?.name ?? pushName { members.append(("push", .string(name))) }
        if let (message, projectID) = push {
            members.append(("target", .object([("kind", .string(message.target.kind.rawValue)), ("id", .string(Self.shown(message.target)))])))
            members.append(("project", .string(projectID)))
            members.append(("attempts", .int(Int64(attempts))))
        } else if let target {
            members.append(("target", .object([("kind", .string(target.kind.rawValue)), ("id", .string(Self.shown(target)))])))
        }
        switch outcome {
        case .sent(let name): members.append(("message", .string(name)))
        case .invalidated(let code): members.append(("fcm_error", .string(code)))
        case .failed(let code, let reasonCode):
            members.append(("fcm_error", .string(code)))
            members.append(("reason_code", .string(reasonCode)))
        case .skipped(let code, let reason), .deadLettered(let code, let reason), .withheld(let code, let reason):
            members.append(("reason_code", .string(code)))
            members.append(("reason", .string(reason)))
        case .deferred(let due): members.append(("due", .string(RFC3339.format(milliseconds: due))))
        }
        if let stamp = source.timestamp?.milliseconds {
            // From the event's record to FCM's answer (or the decision not to send).
            members.append(("latency_ms", .int(max(0, nowMilliseconds - stamp))))
        }
        members.append(("time", .string(RFC3339.format(milliseconds: nowMilliseconds))))
        if let traceParent { members.append(("traceparent", .string(traceParent))) }
        var headers = [KafkaHeader(name: "content-type", string: "application/json")]
        if let traceParent {
            headers.append(KafkaHeader(name: "traceparent", string: traceParent))
            if let state = source.headers.first(where: { traceStateHeaders.contains($0.name.lowercased()) }) {
                headers.append(KafkaHeader(name: "tracestate", value: state.value))
            }
        }
        return KafkaProducerRecord(
            topic: topic, key: Array((eventID ?? coordinates).utf8), value: JSONWriter.write(.object(members)), headers: headers)
    }
}
