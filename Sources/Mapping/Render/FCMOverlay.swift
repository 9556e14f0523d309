import Dates

/// The `fcm:` overlay of a mapping (docs/mapping.md, *Any other FCM field*), checked and
/// compiled by the loader: FCM's JSON, with values taken from the event where the mapping says
/// so. Rendering merges it into the message the mapping's other keys render.
public struct FCMOverlay: Sendable {
    /// The message's members, proto (snake_case) names.
    var members: [(key: String, value: OverlayValue)]
}

/// One value of the overlay.
indirect enum OverlayValue: Sendable {
    /// Fixed JSON, checked at load.
    case json(JSONValue)
    case object([(key: String, value: OverlayValue)])
    case array([OverlayValue])
    /// A value from the event (or its ID), converted per event to `type`.
    case event(ValueSource, OverlayType)
}

/// What an overlay value taken from the event must be, and how it is written.
enum OverlayType: Sendable, Equatable {
    /// A JSON string: strings, numbers and booleans as the loader's other values are
    /// (``Stringify``).
    case string
    /// A string that is a `#rrggbb` colour.
    case color
    /// A string that is an https:// URL.
    case httpsURL
    case bool
    /// An integer from -2^31 to 2^31-1.
    case int32
    /// A JSON number.
    case float
    /// A string among these values.
    case enumeration([String])
    /// google-duration: seconds with up to nine fraction digits and `s` (`"1.5s"`).
    case duration
    /// google-datetime: an RFC 3339 date-time with a zone.
    case timestamp
    /// The event's value as it is, with its JSON type (free JSON: `apns.payload`,
    /// `webpush.notification`).
    case json

    /// The JSON FCM takes for the event's `value` at `field`.
    func convert(_ value: JSONValue, field: String) throws(MappingFailure) -> JSONValue {
        switch self {
        case .json: return value
        case .string, .color, .httpsURL:
            guard let s = Stringify.scalar(value) else {
                throw .wrongType(field: field, expected: "a string, number or boolean", found: value.typeName)
            }
            if self == .color, !EventMapping.isColor(s) { throw .invalidValue(field: field, reason: "\"\(s)\" is not a #rrggbb color") }
            if self == .httpsURL, !EventMapping.isHTTPSURL(s) { throw .invalidValue(field: field, reason: "\"\(s)\" is not an https:// URL") }
            return .string(s)
        case .bool:
            guard case .bool = value else { throw .wrongType(field: field, expected: "a boolean", found: value.typeName) }
            return value
        case .int32:
            guard case .int(let i) = value else { throw .wrongType(field: field, expected: "an integer", found: value.typeName) }
            guard i >= Int64(Int32.min), i <= Int64(Int32.max) else { throw .invalidValue(field: field, reason: "\(i) is not a 32-bit integer") }
            return value
        case .float:
            switch value {
            case .int, .double: return value
            default: throw .wrongType(field: field, expected: "a number", found: value.typeName)
            }
        case .enumeration(let names):
            guard case .string(let s) = value else { throw .wrongType(field: field, expected: "a string", found: value.typeName) }
            guard names.contains(s) else { throw .invalidValue(field: field, reason: "\"\(s)\" is not one of \(names.joined(separator: ", "))") }
            return value
        case .duration, .timestamp:
            guard case .string(let s) = value else { throw .wrongType(field: field, expected: "a string", found: value.typeName) }
            if self == .duration, !Self.isDuration(s) {
                throw .invalidValue(field: field, reason: "\"\(s)\" is not a duration such as \"1.5s\" (seconds, up to 9 fraction digits, then s)")
            }
            if self == .timestamp, RFC3339.parseMilliseconds(s) == nil {
                throw .invalidValue(field: field, reason: "\"\(s)\" is not an RFC 3339 date-time with a zone")
            }
            return value
        }
    }

    /// A literal written in the mapping (a YAML scalar's text, or a `default`) as this type's
    /// JSON; nil if it is not one.
    func literal(_ text: String) -> JSONValue? {
        switch self {
        case .string, .json: return .string(text)
        case .color: return EventMapping.isColor(text) ? .string(text) : nil
        case .httpsURL: return EventMapping.isHTTPSURL(text) ? .string(text) : nil
        case .bool: return text == "true" ? .bool(true) : text == "false" ? .bool(false) : nil
        case .int32: return Int32(text).map { .int(Int64($0)) }
        case .float:
            if let i = Int64(text) { return .int(i) }
            guard let d = Double(text), d.isFinite, abs(d) <= Double(Float.greatestFiniteMagnitude) else { return nil }
            return .double(d)
        case .enumeration(let names): return names.contains(text) ? .string(text) : nil
        case .duration: return Self.isDuration(text) ? .string(text) : nil
        case .timestamp: return RFC3339.parseMilliseconds(text) != nil ? .string(text) : nil
        }
    }

    /// What a literal of this type looks like, for load errors.
    var expected: String {
        switch self {
        case .string, .json: "a string"
        case .color: "a #rrggbb color"
        case .httpsURL: "an https:// URL"
        case .bool: "true or false"
        case .int32: "a 32-bit integer"
        case .float: "a number"
        case .enumeration(let names): "one of " + names.joined(separator: ", ")
        case .duration: "a duration such as \"1.5s\" (seconds, up to 9 fraction digits, then s)"
        case .timestamp: "an RFC 3339 date-time with a zone, such as \"2026-11-22T10:00:00Z\""
        }
    }

    /// google-duration as FCM writes it: non-negative seconds, up to nine fraction digits, `s`.
    static func isDuration(_ s: String) -> Bool {
        let b = Array(s.utf8)
        guard b.count >= 2, b.last == UInt8(ascii: "s") else { return false }
        let number = b.dropLast()
        let parts = number.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        func digits(_ p: ArraySlice<UInt8>) -> Bool { !p.isEmpty && p.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
        switch parts.count {
        case 1: return digits(parts[0]) && parts[0].count <= 12
        case 2: return digits(parts[0]) && parts[0].count <= 12 && digits(parts[1]) && parts[1].count <= 9
        default: return false
        }
    }
}
