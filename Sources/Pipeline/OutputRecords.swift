import Foundation
import JSON
import Kafka

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
        public static let failedAt = "pushbridge-failed-at"
    }

    /// The original key, value and headers, plus `pushbridge-*` headers saying why and where from.
    public static func deadLetter(
        _ message: KafkaMessage, reason: DeadLetterReason, topic: String,
        eventType: String? = nil, eventID: String? = nil, nowMilliseconds: Int64
    ) -> KafkaProducerRecord {
        var headers = message.headers
        headers.append(KafkaHeader(name: Header.reasonCode, string: reason.code))
        headers.append(KafkaHeader(name: Header.reason, string: reason.reason))
        if let code = reason.fcmErrorCode { headers.append(KafkaHeader(name: Header.fcmError, string: code)) }
        headers.append(KafkaHeader(name: Header.attempts, string: String(reason.attempts)))
        headers.append(KafkaHeader(name: Header.sourceTopic, string: message.topic))
        headers.append(KafkaHeader(name: Header.sourcePartition, string: String(message.partition)))
        headers.append(KafkaHeader(name: Header.sourceOffset, string: String(message.offset)))
        if let eventType { headers.append(KafkaHeader(name: Header.eventType, string: eventType)) }
        if let eventID { headers.append(KafkaHeader(name: Header.eventID, string: eventID)) }
        headers.append(KafkaHeader(name: Header.failedAt, string: Timestamp.rfc3339(milliseconds: nowMilliseconds)))
        return KafkaProducerRecord(topic: topic, key: message.key, value: message.value, headers: headers)
    }

    /// A JSON record for the backend to delete a dead token, keyed by the token:
    /// `{"event_id":…,"event_type":…,"reason":"UNREGISTERED","source":"topic/partition/offset","time":…,"token":…}`.
    public static func tokenInvalidation(
        _ invalidation: TokenInvalidation, topic: String, source: KafkaMessage,
        eventType: String?, eventID: String?, nowMilliseconds: Int64
    ) -> KafkaProducerRecord {
        var members: [(key: String, value: JSONValue)] = []
        if let eventID { members.append(("event_id", .string(eventID))) }
        if let eventType { members.append(("event_type", .string(eventType))) }
        members.append(("reason", .string(invalidation.code)))
        members.append(("source", .string("\(source.topic)/\(source.partition)/\(source.offset)")))
        members.append(("time", .string(Timestamp.rfc3339(milliseconds: nowMilliseconds))))
        members.append(("token", .string(invalidation.token)))
        return KafkaProducerRecord(
            topic: topic, key: Array(invalidation.token.utf8), value: JSONWriter.write(.object(members)),
            headers: [KafkaHeader(name: "content-type", string: "application/json")])
    }
}

/// RFC 3339 timestamps in UTC with milliseconds, without Foundation's formatters.
public enum Timestamp {
    public static func rfc3339(milliseconds: Int64) -> String {
        let ms = Int(((milliseconds % 1000) + 1000) % 1000)
        var seconds = (milliseconds - Int64(ms)) / 1000
        var days = seconds / 86_400
        seconds -= days * 86_400
        if seconds < 0 {
            seconds += 86_400
            days -= 1
        }
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2)).\(pad(Int64(ms), 3))Z"
    }

    /// Milliseconds since the epoch, now.
    public static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}
