/// Every key of the config file, its type and its limits; the loader checks files and
/// environment overrides against it (and schemas/config.schema.json says the same for editors).
enum ConfigSchema {
    enum Kind: Equatable {
        case string
        case stringList
        /// An integer ≥ `min`.
        case int(min: Int)
        case double
        case bool
        case oneOf([String])
        /// A map of string to scalar (librdkafka properties).
        case map

        var expected: String {
            switch self {
            case .string: "a string"
            case .stringList: "a list of strings"
            case .int(let min): min == 0 ? "a non-negative integer" : "an integer ≥ \(min)"
            case .double: "a number"
            case .bool: "true or false"
            case .oneOf(let values): "one of " + values.joined(separator: ", ")
            case .map: "a map of names to values"
            }
        }
    }

    static let keys: [String: Kind] = [
        "kafka.brokers": .stringList,
        "kafka.group": .string,
        "kafka.instance_id": .string,
        "kafka.topics": .stringList,
        "kafka.assignment_strategy": .oneOf(["range", "roundrobin", "cooperative-sticky"]),
        "kafka.session_timeout_ms": .int(min: 1),
        "kafka.properties": .map,
        "mappings": .stringList,
        "fcm.service_account": .string,
        "fcm.endpoint": .string,
        "fcm.ca_file": .string,
        "fcm.validate_only": .bool,
        "fcm.max_streams": .int(min: 1),
        "fcm.connections": .int(min: 1),
        "fcm.max_sends_per_second": .double,
        "fcm.project_sends_per_second": .double,
        "fcm.request_timeout_ms": .int(min: 1),
        "fcm.retry.max_attempts": .int(min: 1),
        "fcm.retry.initial_backoff_ms": .int(min: 0),
        "fcm.retry.max_backoff_ms": .int(min: 0),
        "fcm.retry.budget_ms": .int(min: 0),
        "fcm.retry.quota_pause_ms": .int(min: 0),
        "topics.dead_letter": .string,
        "topics.token_invalidation": .string,
        "delivery.max_events_in_flight": .int(min: 1),
        "delivery.max_sends_in_flight": .int(min: 1),
        "delivery.partition_buffer": .int(min: 1),
        "delivery.commit_interval_ms": .int(min: 1),
        "delivery.commit_every_events": .int(min: 1),
        "delivery.offset_map": .bool,
        "delivery.unknown_event_types": .oneOf(["skip", "dead-letter"]),
        "delivery.shutdown_timeout_ms": .int(min: 0),
        "http.listen": .string,
        "log.level": .oneOf(["trace", "debug", "info", "notice", "warning", "error", "critical"]),
        "log.format": .oneOf(["json", "text"]),
    ]

    /// Keys that must be given (in the file or the environment).
    static let required = ["kafka.brokers", "kafka.topics", "mappings"]

    /// Sections: keys that hold other keys.
    static let sections: Set<String> = ["kafka", "fcm", "fcm.retry", "topics", "delivery", "http", "log"]

    /// The environment variable that overrides `key`: `PUSHBRIDGE_` + the path upper-cased,
    /// dots as underscores (`delivery.max_events_in_flight` → `PUSHBRIDGE_DELIVERY_MAX_EVENTS_IN_FLIGHT`).
    static func environmentName(_ key: String) -> String {
        "PUSHBRIDGE_" + key.uppercased().replacingOccurrences(of: ".", with: "_")
    }

    /// The known key closest to `key` (for "did you mean"), if any is close.
    static func suggestion(for key: String) -> String? {
        let candidates = Array(keys.keys) + Array(sections)
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
