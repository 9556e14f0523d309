/// Why an event produced no messages. A value, never a crash: the pipeline dead-letters the
/// event with ``code`` and ``reason`` in its headers.
public enum MappingFailure: Error, Sendable, Equatable, CustomStringConvertible {
    case invalidJSON(String)
    case missingEventType(String)
    case unknownEventType(String)
    /// A required field is null or missing and has no default. `role` says what it was for.
    case missingField(field: String, role: String)
    case wrongType(field: String, expected: String, found: String)
    case invalidValue(field: String, reason: String)
    /// The serialized message is over FCM's limit.
    case tooLarge(bytes: Int, limit: Int)
    case noTargets(String)
    /// Older than its mapping's `max_age`: not sent, but skipped or dead-lettered as the
    /// mapping's `too_old` says (the pipeline decides, like for an unknown event type).
    case tooOld(TooOld)
    /// `max_age` needs the event's time, and it is missing or unreadable.
    case invalidEventTime(field: String, reason: String)
    /// A `user` target whose user has no device (none registered, or none the filter lets
    /// through): done without a send, or dead-lettered (`registry.no_devices`).
    case noDevices(user: String)
    /// The device registry could not be read: not the event's fault (the pipeline stops
    /// rather than dead-letter it).
    case registryUnavailable(String)
    /// The record's bytes do not decode with its writer schema, or its frame is broken.
    case undecodable(String)
    /// The Schema Registry has no schema with the record's ID.
    case unknownSchema(id: UInt32)
    /// The record's writer schema (or one it references) cannot be read.
    case invalidSchema(id: UInt32, reason: String)
    /// The value is not what the topic's `kafka.value_formats` says, or it is a Schema Registry
    /// record and no registry is configured.
    case wrongValueFormat(String)
    /// No variant of the event's type takes it, and it has no default: skipped or
    /// dead-lettered as the mapping's `unmatched` says.
    case noVariant(NoVariant)
    /// The event's type has `pushes`, and none is for this event (each push's `when` is false):
    /// skipped.
    case noPush(eventType: String, eventID: String)
    /// A Live Activity mapping's `event.map` sends the field's value to `skip`: skipped.
    case activitySkipped(field: String, value: String)
    /// A rule of the user's withheld the push (a muted category, quiet hours): skipped, and
    /// counted by rule (docs/rules.md).
    case withheld(Withheld)

    /// A short stable code for dead-letter headers and metrics.
    public var code: String {
        switch self {
        case .invalidJSON: "invalid_json"
        case .missingEventType: "missing_event_type"
        case .unknownEventType: "unknown_event_type"
        case .missingField: "missing_field"
        case .wrongType: "wrong_type"
        case .invalidValue: "invalid_value"
        case .tooLarge: "too_large"
        case .noTargets: "no_targets"
        case .tooOld: "too_old"
        case .invalidEventTime: "invalid_event_time"
        case .noDevices: "no_devices"
        case .registryUnavailable: "registry_unavailable"
        case .undecodable: "undecodable_record"
        case .unknownSchema: "unknown_schema"
        case .invalidSchema: "invalid_schema"
        case .wrongValueFormat: "wrong_value_format"
        case .noVariant: "no_variant"
        case .noPush: "no_push"
        case .activitySkipped: "activity_skip"
        case .withheld(let w): w.rule.rawValue
        }
    }

    /// A sentence for people.
    public var reason: String {
        switch self {
        case .invalidJSON(let why): "the event is not valid JSON: \(why)"
        case .missingEventType(let pointer): "the event has no type at \(pointer)"
        case .unknownEventType(let type): "no mapping for event type \"\(type)\""
        case .missingField(let field, let role): "\(role): field \(field) is missing or null and has no default"
        case .wrongType(let field, let expected, let found): "field \(field) is \(found), expected \(expected)"
        case .invalidValue(let field, let why): "field \(field): \(why)"
        case .tooLarge(let bytes, let limit): "the message is \(bytes) bytes, over FCM's limit of \(limit)"
        case .noTargets(let why): "no one to send to: \(why)"
        case .tooOld(let t):
            "the event is \(EventAge.text(seconds: t.ageMilliseconds / 1000)) old (from \(t.measuredFrom)), over its max_age of \(EventAge.text(seconds: Int64(t.maxAgeSeconds)))"
        case .invalidEventTime(let field, let why): "max_age needs the event's time, and \(field) is not one: \(why)"
        case .noDevices(let user): "user \(user) has no device to send to"
        case .registryUnavailable(let why): "the device registry cannot be read: \(why)"
        case .undecodable(let why): "the record does not decode with its schema: \(why)"
        case .unknownSchema(let id): "the Schema Registry has no schema with ID \(id)"
        case .invalidSchema(let id, let why): "schema \(id) from the Schema Registry cannot be read: \(why)"
        case .wrongValueFormat(let why): why
        case .noVariant(let n): "no variant of event type \"\(n.eventType)\" matches the event"
        case .noPush(let type, _): "no push of event type \"\(type)\" is for the event (the `when` of each is false)"
        case .activitySkipped(let field, let value): "activity.event.map sends \(field) = \"\(value)\" to skip"
        case .withheld(let w): w.reason
        }
    }

    public var description: String { "\(code): \(reason)" }
}

/// An event older than its mapping's `max_age`, with what the pipeline needs to count it and
/// write its dead-letter record (its type and ID, which other failures may not know).
public struct TooOld: Sendable, Equatable {
    public var eventType: String
    public var eventID: String
    public var ageMilliseconds: Int64
    public var maxAgeSeconds: Int
    /// The `occurred_at` pointer, or "the Kafka timestamp".
    public var measuredFrom: String
    public var action: MaxAge.TooOldAction

    public init(eventType: String, eventID: String, ageMilliseconds: Int64, maxAgeSeconds: Int, measuredFrom: String, action: MaxAge.TooOldAction) {
        self.eventType = eventType
        self.eventID = eventID
        self.ageMilliseconds = ageMilliseconds
        self.maxAgeSeconds = maxAgeSeconds
        self.measuredFrom = measuredFrom
        self.action = action
    }
}

/// A push a user's rule withheld (``UserRules``), with what the pipeline needs to count it and
/// write its outcome record.
public struct Withheld: Sendable, Equatable {
    public var eventType: String
    public var eventID: String
    public var user: String
    public var rule: WithholdRule
    public var reason: String
    /// The push's name, for an event type with `pushes`.
    public var push: String?

    public init(eventType: String, eventID: String, user: String, rule: WithholdRule, reason: String, push: String? = nil) {
        self.eventType = eventType
        self.eventID = eventID
        self.user = user
        self.rule = rule
        self.reason = reason
        self.push = push
    }
}

/// One device of a user a rule left out while the user's other devices get the push.
public struct WithheldDevice: Sendable, Equatable {
    public var device: UserDevice
    public var user: String
    public var rule: WithholdRule
    /// The push's name, for an event type with `pushes`.
    public var push: String?

    public init(device: UserDevice, user: String, rule: WithholdRule, push: String? = nil) {
        self.device = device
        self.user = user
        self.rule = rule
        self.push = push
    }
}
