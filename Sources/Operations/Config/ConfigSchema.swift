/// The config file's keys, each declared once in ``keys`` (ConfigKeys.swift): its name, kind and
/// limits, where it lives in ``PushbridgeConfig`` (whose initial values are the defaults), and its
/// doc line. The loader checks and reads files and environment overrides through it,
/// `--print-config` prints through it and the environment names follow from the names;
/// ConfigDeclarationTests holds schemas/config.schema.json, docs/configuration.md and the example
/// against it.
enum ConfigSchema {
    enum Kind: Equatable, Sendable {
        case string
        case stringList
        /// An integer ≥ `min`.
        case int(min: Int)
        /// A number > 0.
        case double
        case bool
        case oneOf([String])
        /// A map of string to scalar (librdkafka properties).
        case map
        /// Named Firebase projects, each a map of ``ConfigSchema/projectFields`` (`fcm.projects`).
        case projects
        /// Topic names to one of these words (`kafka.value_formats`).
        case wordMap([String])

        var expected: String {
            switch self {
            case .string: "a string"
            case .stringList: "a list of strings"
            case .int(let min): min == 0 ? "a non-negative integer" : "an integer ≥ \(min)"
            case .double: "a number"
            case .bool: "true or false"
            case .oneOf(let values): "one of " + values.joined(separator: ", ")
            case .map: "a map of names to values"
            case .projects: "a map of project names to {service_account, max_sends_per_second, project_sends_per_second}"
            case .wordMap(let words): "a map of topics to " + words.joined(separator: ", ")
            }
        }
    }

    /// One key of the file. Its value goes through a ``Conversion`` between the file's ``Value``
    /// and its field, so the loader and the printer need nothing key by key.
    struct Key: Sendable {
        /// The dotted path, `fcm.retry.budget_ms`.
        let name: String
        let kind: Kind
        /// Must be given (file or environment): its field's initial value is only a placeholder.
        let required: Bool
        /// What a value must look like, for a refusal of a value that has the right kind.
        let format: String
        /// The key's description in schemas/config.schema.json.
        let doc: String
        /// Sets the field from a value of the right kind (relative paths resolved with the given
        /// function); false when the value cannot be used.
        let store: @Sendable (inout PushbridgeConfig, Value, (String) -> String) -> Bool
        /// The field's value in a config, as the file writes it.
        let value: @Sendable (PushbridgeConfig) -> Value
        /// A value as a refusal quotes it: credentials redacted.
        let shown: @Sendable (Value) -> String

        init<T>(
            _ name: String, _ field: WritableKeyPath<PushbridgeConfig, T> & Sendable, _ conversion: Conversion<T>, required: Bool = false,
            _ doc: String
        ) {
            self.name = name
            self.kind = conversion.kind
            self.required = required
            self.format = conversion.format ?? conversion.kind.expected
            self.doc = doc
            self.store = { config, value, resolve in
                guard let converted = conversion.decode(value, resolve) else { return false }
                config[keyPath: field] = converted
                return true
            }
            self.value = { conversion.encode($0[keyPath: field]) }
            self.shown = { conversion.redact?($0.text) ?? $0.text }
        }
    }

    /// The settings of one of `fcm.projects`, and whether each is required.
    static let projectFields: [(name: String, kind: Kind, required: Bool)] = [
        ("service_account", .string, true), ("max_sends_per_second", .double, false), ("project_sends_per_second", .double, false),
    ]

    static let named = Dictionary(uniqueKeysWithValues: keys.map { ($0.name, $0) })

    /// Keys that must be given (in the file or the environment).
    static let required = keys.filter(\.required).map(\.name)

    /// Sections: keys that hold other keys (every proper prefix of a key's path).
    static let sections = Set(
        keys.flatMap { key in
            let parts = key.name.split(separator: ".")
            return (1..<parts.count).map { parts.prefix($0).joined(separator: ".") }
        })

    /// The environment variable that overrides `key`: `PUSHBRIDGE_` + the path upper-cased,
    /// dots as underscores (`delivery.max_events_in_flight` → `PUSHBRIDGE_DELIVERY_MAX_EVENTS_IN_FLIGHT`).
    static func environmentName(_ key: String) -> String {
        "PUSHBRIDGE_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
    }

    /// The known key closest to `key` (for "did you mean"), if any is close.
    static func suggestion(for key: String) -> String? {
        let candidates = keys.map(\.name) + Array(sections)
        let scored = candidates.map { ($0, distance($0, key)) }.min { $0.1 < $1.1 || ($0.1 == $1.1 && $0.0 < $1.0) }
        guard let (best, d) = scored, d <= max(2, key.count / 4) else { return nil }
        return best
    }

    private static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a)
        let b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in stride(from: 1, through: b.count, by: 1) {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return a.isEmpty ? b.count : row[b.count]
    }
}
