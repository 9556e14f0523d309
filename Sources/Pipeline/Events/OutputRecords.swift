import Dates
import Foundation
import JSON
import Kafka
import Mapping

/// The records the pipeline writes besides sending pushes. Pure builders.
public enum OutputRecords {
    /// Header names on dead-letter records. The original record's headers come first, unchanged.
    public enum Header {
        public static let reasonCode = "pushbridge-reason-code"
        public static let reason = "pushbridge-reason"
        public static let fcmError = "pushbridge-fcm-error"
        public static let attempts = "pushbridge-attempts"
        public static let sourceTopic = "pushbridge-source-topic"
        public static let sourcePartition = "pushbridge-source-partition"
        public static let sourceOffset = "pushbridge-source-offset"
        public static let eventType = "pushbridge-event-type"
        public static let eventID = "pushbridge-event-id"
        /// The Firebase project ID the event's messages went to (absent when it got no project).
        public static let project = "pushbridge-project"
        public static let failedAt = "pushbridge-failed-at"
    }

    /// The original key, value and headers, plus `pushbridge-*` headers saying why and where from.
    /// `traceParent`: the event's own span's, when the worker traced it: the record's `traceparent`
    /// header, in place of the event's (its `tracestate` stays).
    public static func deadLetter(
        _ message: KafkaMessage, reason: DeadLetterReason, topic: String,
        eventType: String? = nil, eventID: String? = nil, project: String? = nil, nowMilliseconds: Int64, traceParent: String? = nil
    ) -> KafkaProducerRecord {
        var headers = message.headers
        if let traceParent {
            headers.removeAll { $0.name == "traceparent" }
            headers.append(KafkaHeader(name: "traceparent", string: traceParent))
        }
        headers.append(KafkaHeader(name: Header.reasonCode, string: reason.code))
        headers.append(KafkaHeader(name: Header.reason, string: reason.reason))
        if let code = reason.fcmErrorCode { headers.append(KafkaHeader(name: Header.fcmError, string: code)) }
        headers.append(KafkaHeader(name: Header.attempts, string: String(reason.attempts)))
        headers.append(KafkaHeader(name: Header.sourceTopic, string: message.topic))
        headers.append(KafkaHeader(name: Header.sourcePartition, string: String(message.partition)))
        headers.append(KafkaHeader(name: Header.sourceOffset, string: String(message.offset)))
        if let eventType { headers.append(KafkaHeader(name: Header.eventType, string: eventType)) }
        if let eventID { headers.append(KafkaHeader(name: Header.eventID, string: eventID)) }
        if let project { headers.append(KafkaHeader(name: Header.project, string: project)) }
        headers.append(KafkaHeader(name: Header.failedAt, string: RFC3339.format(milliseconds: nowMilliseconds)))
        return KafkaProducerRecord(topic: topic, key: message.key, value: message.value, headers: headers)
    }

    /// A JSON record for the backend to delete a dead device identifier, keyed by it, naming it
    /// by its kind (`fid` or `token`) and the Firebase project it belongs to (for a Live
    /// Activity's dead token: kind `live_activity_token`, keyed by Apple's token, with the
    /// activity and the device's identifier):
    /// `{"event_id":…,"event_type":…,"kind":"token","project":"my-app","reason":"UNREGISTERED","source":"topic/partition/offset","time":…,"token":…}`.
    public static func tokenInvalidation(
        _ invalidation: TokenInvalidation, topic: String, source: KafkaMessage,
        eventType: String?, eventID: String?, project: String? = nil, user: String? = nil, nowMilliseconds: Int64
    ) -> KafkaProducerRecord {
        var members: [(key: String, value: JSONValue)] = []
        let activity = invalidation.liveActivity
        let pushToStart = activity?.pushToStartType
        if let activity, pushToStart == nil { members.append(("activity", .string(activity.key))) }
        if let pushToStart { members.append(("attributes_type", .string(pushToStart))) }
        if let eventID { members.append(("event_id", .string(eventID))) }
        if let eventType { members.append(("event_type", .string(eventType))) }
        if invalidation.kind == .fid { members.append(("fid", .string(invalidation.device))) }
        let kind = pushToStart != nil ? "push_to_start_token" : activity != nil ? "live_activity_token" : invalidation.kind.rawValue
        members.append(("kind", .string(kind)))
        if let activity { members.append((pushToStart == nil ? "live_activity_token" : "push_to_start_token", .string(activity.token))) }
        if let project { members.append(("project", .string(project))) }
        members.append(("reason", .string(invalidation.code.name)))
        members.append(("source", .string("\(source.topic)/\(source.partition)/\(source.offset)")))
        members.append(("time", .string(RFC3339.format(milliseconds: nowMilliseconds))))
        if invalidation.kind == .token { members.append(("token", .string(invalidation.device))) }
        if pushToStart != nil, let user { members.append(("user", .string(user))) }
        return KafkaProducerRecord(
            topic: topic, key: Array((activity?.token ?? invalidation.device).utf8), value: JSONWriter.write(.object(members)),
            headers: [KafkaHeader(name: "content-type", string: "application/json")])
    }
}
