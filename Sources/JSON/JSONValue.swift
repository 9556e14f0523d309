/// A JSON value, as events are read and FCM messages are written.
///
/// Numbers keep the distinction the stringification rule needs: integers (no fraction or
/// exponent) that fit in 64 bits, integers that do not (kept as their exact text, so an ID such
/// as `12345678901234567890` never loses digits), and doubles. Objects keep their members in order.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    /// An integer beyond 64 bits: its decimal text exactly as written (`-`, then digits).
    case bigInteger(String)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    public static func == (a: JSONValue, b: JSONValue) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.bool(let x), .bool(let y)): return x == y
        case (.int(let x), .int(let y)): return x == y
        case (.bigInteger(let x), .bigInteger(let y)): return x == y
        case (.double(let x), .double(let y)): return x == y
        case (.string(let x), .string(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.object(let x), .object(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    /// The member `key` of an object (the first, if repeated).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The text of a string value; nil for any other kind.
    public var stringValue: String? {
        if case .string(let s) = self { s } else { nil }
    }

    /// What this value is called in messages: "string", "integer", "number", "boolean", "null",
    /// "array" or "object".
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .bigInteger: "integer"
        case .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
