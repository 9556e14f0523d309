import Mapping

extension ConfigSchema {
    /// A key's value as the config file writes it (and `--print-config` prints it).
    enum Value: Equatable, Sendable {
        case null
        case string(String)
        /// A word of a closed set (an enum's case, `off`), printed bare as the file writes it.
        case word(String)
        case strings([String])
        case int(Int)
        case double(Double)
        case bool(Bool)
        case map([String: String])
        case projects([String: PushbridgeConfig.Project])

        var string: String? {
            switch self {
            case .string(let s), .word(let s): s
            default: nil
            }
        }
        var strings: [String]? { if case .strings(let s) = self { s } else { nil } }
        var int: Int? { if case .int(let i) = self { i } else { nil } }
        var double: Double? { if case .double(let d) = self { d } else { nil } }
        var bool: Bool? { if case .bool(let b) = self { b } else { nil } }
        var map: [String: String]? { if case .map(let m) = self { m } else { nil } }
        var projects: [String: PushbridgeConfig.Project]? { if case .projects(let p) = self { p } else { nil } }

        /// The value unquoted, for messages and the docs table.
        var text: String {
            switch self {
            case .null: "null"
            case .string(let s), .word(let s): s
            case .strings(let items): "[" + items.joined(separator: ", ") + "]"
            case .int(let i): String(i)
            case .double(let d): String(d)
            case .bool(let b): String(b)
            case .map(let m): "{" + m.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
            case .projects(let p): "{" + p.keys.sorted().joined(separator: ", ") + "}"
            }
        }
    }

    /// Between a key's ``Value`` (already checked against `kind`) and its field's type: what the
    /// loader stores and what `--print-config` prints.
    struct Conversion<T>: Sendable {
        let kind: Kind
        /// What a value must look like where `kind` says less.
        var format: String?
        /// The field's value; nil when the value cannot be used. Relative paths are resolved
        /// with the function given.
        let decode: @Sendable (Value, (String) -> String) -> T?
        let encode: @Sendable (T) -> Value
        /// Hides the secrets in a value's text, for errors; nil: nothing to hide.
        var redact: (@Sendable (String) -> String)? = nil
    }
}

extension ConfigSchema.Conversion where T == String {
    static var string: Self { Self(kind: .string, decode: { v, _ in v.string }, encode: { .string($0) }) }
    static func oneOf(_ values: [String]) -> Self { Self(kind: .oneOf(values), decode: { v, _ in v.string }, encode: { .word($0) }) }
    /// A file's path, relative to the config file's directory.
    static var path: Self { Self(kind: .string, decode: { v, resolve in v.string.map(resolve) }, encode: { .string($0) }) }
}

extension ConfigSchema.Conversion where T == String? {
    static var string: Self { Self(kind: .string, decode: { v, _ in v.string }, encode: { $0.map { .string($0) } ?? .null }) }
    /// A file's path, relative to the config file's directory.
    static var path: Self { Self(kind: .string, decode: { v, resolve in v.string.map(resolve) }, encode: { $0.map { .string($0) } ?? .null }) }
    /// An egress proxy's URL, normalized (``EgressProxy/normalized(_:)``), or `off`; printed
    /// with its password redacted.
    static var proxy: Self {
        Self(
            kind: .string, format: EgressProxy.format,
            decode: { v, _ in
                guard let text = v.string else { return nil }
                return text == EgressProxy.off ? .some(text) : EgressProxy.normalized(text).map { .some($0) }
            },
            encode: { url in
                guard let url else { return .null }
                return url == EgressProxy.off ? .word(url) : .string(EgressProxy.redacted(url))
            },
            redact: { EgressProxy.redacted($0) })
    }
}

extension ConfigSchema.Conversion where T == String? {
    /// A credential: printed and quoted in refusals as `<redacted>`.
    static var secret: Self {
        Self(kind: .string, decode: { v, _ in v.string }, encode: { $0.map { _ in .string("<redacted>") } ?? .null }, redact: { _ in "<redacted>" })
    }
}

extension ConfigSchema.Conversion where T == String? {
    /// A URL that may carry `user:password@`: printed and quoted in refusals without the password.
    static var url: Self {
        Self(
            kind: .string, decode: { v, _ in v.string }, encode: { $0.map { .string(EgressProxy.redacted($0)) } ?? .null },
            redact: { EgressProxy.redacted($0) })
    }
}

extension ConfigSchema.Conversion where T == [String: ValueFormat] {
    /// `kafka.value_formats`: topic to one of ``ValueFormat``'s cases.
    static var valueFormats: Self {
        Self(
            kind: .wordMap(ValueFormat.allCases.map(\.rawValue)),
            decode: { v, _ in
                guard let map = v.map else { return nil }
                var formats: [String: ValueFormat] = [:]
                for (topic, name) in map {
                    guard let format = ValueFormat(rawValue: name) else { return nil }
                    formats[topic] = format
                }
                return formats
            },
            encode: { .map($0.mapValues(\.rawValue)) })
    }
}

extension ConfigSchema.Conversion where T == [String]? {
    static var strings: Self { Self(kind: .stringList, decode: { v, _ in v.strings }, encode: { $0.map { .strings($0) } ?? .null }) }
}

extension ConfigSchema.Conversion where T == [String] {
    static var strings: Self { Self(kind: .stringList, decode: { v, _ in v.strings }, encode: { .strings($0) }) }
    /// Paths relative to the config file's directory.
    static var paths: Self { Self(kind: .stringList, decode: { v, resolve in v.strings?.map(resolve) }, encode: { .strings($0) }) }
}

extension ConfigSchema.Conversion where T == Int {
    static func int(min: Int) -> Self { Self(kind: .int(min: min), decode: { v, _ in v.int }, encode: { .int($0) }) }
}

extension ConfigSchema.Conversion where T == Int? {
    static func int(min: Int) -> Self { Self(kind: .int(min: min), decode: { v, _ in v.int }, encode: { $0.map { .int($0) } ?? .null }) }
}

extension ConfigSchema.Conversion where T == Duration {
    /// Whole milliseconds in the file (`_ms` keys).
    static func milliseconds(min: Int) -> Self {
        Self(
            kind: .int(min: min), decode: { v, _ in v.int.map { .milliseconds($0) } },
            encode: { .int(Int($0.components.seconds) * 1000 + Int($0.components.attoseconds / 1_000_000_000_000_000)) })
    }
}

extension ConfigSchema.Conversion where T == Double? {
    static var number: Self { Self(kind: .double, decode: { v, _ in v.double }, encode: { $0.map { .double($0) } ?? .null }) }
}

extension ConfigSchema.Conversion where T == Double {
    /// A share, 0 < r ≤ 1.
    static var ratio: Self { Self(kind: .double, decode: { v, _ in v.double.flatMap { $0 <= 1 ? $0 : nil } }, encode: { .double($0) }) }
}

extension ConfigSchema.Conversion where T == Bool {
    static var bool: Self { Self(kind: .bool, decode: { v, _ in v.bool }, encode: { .bool($0) }) }
}

extension ConfigSchema.Conversion where T == [String: String] {
    static var map: Self { Self(kind: .map, decode: { v, _ in v.map }, encode: { .map($0) }) }
}

extension ConfigSchema.Conversion where T: CaseIterable & RawRepresentable & Sendable, T.RawValue == String {
    /// One of an enum's cases, by raw value: the allowed values are the cases.
    static var cases: Self {
        Self(kind: .oneOf(T.allCases.map(\.rawValue)), decode: { v, _ in v.string.flatMap(T.init(rawValue:)) }, encode: { .word($0.rawValue) })
    }
}

extension ConfigSchema.Conversion where T == PushbridgeConfig.Rules.Partitioner? {
    /// `rules.source.partitioner`: one of the hashes, or null.
    static var partitioner: Self {
        Self(
            kind: .oneOf(PushbridgeConfig.Rules.Partitioner.allCases.map(\.rawValue)),
            decode: { v, _ in v.string.flatMap(PushbridgeConfig.Rules.Partitioner.init(rawValue:)).map { .some($0) } },
            encode: { $0.map { .word($0.rawValue) } ?? .null })
    }
}

extension ConfigSchema.Conversion where T == (host: String, port: Int)? {
    /// `host:port` (an empty host: every interface) or `off` (nil).
    static var listen: Self {
        Self(
            kind: .string, format: "host:port (e.g. 0.0.0.0:9464) or off",
            decode: { v, _ in
                guard let text = v.string else { return nil }
                if text == "off" { return .some(nil) }
                guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
                    return nil
                }
                let host = String(text[..<colon])
                return (host.isEmpty ? "0.0.0.0" : host, port)
            },
            encode: { $0.map { .string("\($0.host):\($0.port)") } ?? .word("off") })
    }
}

extension ConfigSchema.Conversion where T == [String: PushbridgeConfig.Project] {
    /// `fcm.projects`: checked and its paths resolved by the loader as it reads the file.
    static var projects: Self { Self(kind: .projects, decode: { v, _ in v.projects }, encode: { .projects($0) }) }
}
