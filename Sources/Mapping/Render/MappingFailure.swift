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
        }
    }

    public var description: String { "\(code): \(reason)" }
}
