/// JSON an app decodes, written in a mapping with values from the event that keep their JSON
/// type: a Live Activity's `content-state` and `attributes` (docs/mapping.md, *Typed values*).
/// Unlike localization args, which are always strings, a number stays a number, so a Swift
/// `Codable` field of type `Int`, `Double` or `Bool` decodes it.
indirect enum JSONTemplate: Sendable, Equatable {
    /// Fixed JSON, as the YAML reads (YAML 1.2's core schema: `on` and `yes` are strings).
    case json(JSONValue)
    case object([Member])
    case array([JSONTemplate])
    /// The event's value at `pointer`, converted as `conversion` says. Null or missing: the
    /// default; else left out when optional; else the event fails `missing_field`.
    case field(JSONPointer, default: JSONValue?, optional: Bool, conversion: Conversion)

    struct Member: Sendable, Equatable {
        var key: String
        var value: JSONTemplate
    }

    /// `as:` in a mapping.
    enum Conversion: String, Sendable, CaseIterable {
        /// The value as it is.
        case none = "json"
        /// A string as docs/mapping.md's stringification writes it (`11.80` → `"11.8"`).
        case string
        /// An integer, or a string holding one.
        case int
        /// A number, or a string holding one.
        case number
        /// `true`/`false`, or those strings.
        case bool
        /// A time (RFC 3339 with a zone, or epoch milliseconds) as whole seconds since 1970.
        case unixSeconds = "unix_seconds"
        /// The same time as seconds since 2001-01-01: what a Swift `Date` decodes by default
        /// (`Date`'s Codable conformance writes `timeIntervalSinceReferenceDate`).
        case appleDate = "apple_date"
    }

    /// Seconds from 1970-01-01 to 2001-01-01, Foundation's reference date.
    static let appleEpochOffset: Int64 = 978_307_200

    /// The JSON for `data`; `role` names it in failures.
    func render(_ data: JSONValue, role: String) throws(MappingFailure) -> JSONValue {
        try value(data, role: role) ?? .null
    }

    /// nil: an optional field that is absent (its member is left out).
    private func value(_ data: JSONValue, role: String) throws(MappingFailure) -> JSONValue? {
        switch self {
        case .json(let json): return json
        case .array(let items):
            var out: [JSONValue] = []
            for item in items { out.append(try item.value(data, role: role) ?? .null) }
            return .array(out)
        case .object(let members):
            var out: [(key: String, value: JSONValue)] = []
            for member in members {
                if let v = try member.value.value(data, role: role + "." + member.key) { out.append((member.key, v)) }
            }
            return .object(out)
        case .field(let pointer, let fallback, let optional, let conversion):
            let found = pointer.resolve(in: data) ?? .null
            if case .null = found {
                if let fallback { return fallback }
                if optional { return nil }
                throw .missingField(field: pointer.description, role: role)
            }
            return try Self.convert(found, conversion, field: pointer.description)
        }
    }

    static func convert(_ value: JSONValue, _ conversion: Conversion, field: String) throws(MappingFailure) -> JSONValue {
        switch conversion {
        case .none: return value
        case .string:
            guard let s = Stringify.scalar(value) else {
                throw .wrongType(field: field, expected: "a string, number or boolean", found: value.typeName)
            }
            return .string(s)
        case .int:
            switch value {
            case .int: return value
            case .double(let d) where d == d.rounded() && abs(d) < 9e15: return .int(Int64(d))
            case .string(let s):
                guard let i = Int64(s) else { throw .invalidValue(field: field, reason: "\"\(s.prefix(64))\" is not an integer") }
                return .int(i)
            case .double(let d): throw .invalidValue(field: field, reason: "\(Stringify.number(d)) is not an integer")
            default: throw .wrongType(field: field, expected: "an integer", found: value.typeName)
            }
        case .number:
            switch value {
            case .int, .double: return value
            case .string(let s):
                guard let d = Double(s), d.isFinite, s.allSatisfy({ $0.isNumber || "+-.eE".contains($0) }) else {
                    throw .invalidValue(field: field, reason: "\"\(s.prefix(64))\" is not a number")
                }
                return Int64(s).map { .int($0) } ?? .double(d)
            default: throw .wrongType(field: field, expected: "a number", found: value.typeName)
            }
        case .bool:
            switch value {
            case .bool: return value
            case .string("true"): return .bool(true)
            case .string("false"): return .bool(false)
            default: throw .wrongType(field: field, expected: "true or false", found: value.typeName)
            }
        case .unixSeconds, .appleDate:
            let ms = try EventAge.fieldTime(in: value, at: JSONPointer("")!, unit: .milliseconds, role: nil, field: field)
            let seconds = EventAge.seconds(ms)
            return .int(conversion == .unixSeconds ? seconds : seconds - appleEpochOffset)
        }
    }

    /// The pointers it reads.
    var pointers: [JSONPointer] {
        switch self {
        case .json: []
        case .array(let items): items.flatMap(\.pointers)
        case .object(let members): members.flatMap(\.value.pointers)
        case .field(let pointer, _, _, _): [pointer]
        }
    }
}
