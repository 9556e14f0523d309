/// `pushbridge run --print-config`: the effective values (file, environment, defaults) in the
/// config file's own layout, with secret Kafka properties replaced by `<redacted>`, so the output
/// can be pasted into a ticket.
extension PushbridgeConfig {
    /// Kafka properties whose values are credentials.
    public static func isSecretProperty(_ name: String) -> Bool {
        let n = name.lowercased()
        return n.contains("password") || n.contains("secret") || n.hasSuffix(".key.pem") || n == "sasl.oauthbearer.config"
    }

    public var printed: String {
        func q(_ s: String) -> String {
            // Plain only when YAML reads it back as the same string: no indicator may start it.
            let plain =
                (s.first.map { $0.isLetter || $0.isNumber || "/.".contains($0) } ?? false)
                && s.allSatisfy { $0.isLetter || $0.isNumber || "-_./:@".contains($0) }
                && !["true", "false", "null", "yes", "no", "on", "off", "~"].contains(s.lowercased())
            return plain ? s : "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        func list(_ items: [String]) -> String { "[" + items.map(q).joined(separator: ", ") + "]" }
        func ms(_ d: Duration) -> String { String(d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000) }
        func opt(_ s: String?) -> String { s.map(q) ?? "null" }

        var lines = ["kafka:"]
        lines.append("  brokers: \(list(kafka.brokers))")
        lines.append("  group: \(q(kafka.group))")
        lines.append("  instance_id: \(opt(kafka.instanceID))")
        lines.append("  topics: \(list(kafka.topics))")
        lines.append("  assignment_strategy: \(kafka.assignmentStrategy)")
        lines.append("  session_timeout_ms: \(ms(kafka.sessionTimeout))")
        if kafka.properties.isEmpty {
            lines.append("  properties: {}")
        } else {
            lines.append("  properties:")
            for (name, value) in kafka.properties.sorted(by: { $0.key < $1.key }) {
                lines.append("    \(name): \(Self.isSecretProperty(name) ? "<redacted>" : q(value))")
            }
        }
        lines.append("mappings: \(list(mappings))")
        lines.append("fcm:")
        lines.append("  service_account: \(opt(fcm.serviceAccountFile))")
        lines.append("  endpoint: \(q(fcm.endpoint))")
        lines.append("  ca_file: \(opt(fcm.caFile))")
        lines.append("  validate_only: \(fcm.validateOnly)")
        lines.append("  max_streams: \(fcm.maxStreams)")
        lines.append("  connections: \(fcm.connections)")
        lines.append("  max_sends_per_second: \(fcm.maxSendsPerSecond.map { String($0) } ?? "null")")
        lines.append("  project_sends_per_second: \(fcm.projectSendsPerSecond.map { String($0) } ?? "null")")
        lines.append("  request_timeout_ms: \(ms(fcm.requestTimeout))")
        lines.append("  retry:")
        lines.append("    max_attempts: \(fcm.retry.maxAttempts.map { String($0) } ?? "null")")
        lines.append("    initial_backoff_ms: \(ms(fcm.retry.initialBackoff))")
        lines.append("    max_backoff_ms: \(ms(fcm.retry.maxBackoff))")
        lines.append("    budget_ms: \(ms(fcm.retry.budget))")
        lines.append("    quota_pause_ms: \(ms(fcm.retry.quotaPause))")
        lines.append("topics:")
        lines.append("  dead_letter: \(q(topics.deadLetter))")
        lines.append("  token_invalidation: \(q(topics.tokenInvalidation))")
        lines.append("delivery:")
        lines.append("  max_events_in_flight: \(delivery.maxEventsInFlight)")
        lines.append("  max_sends_in_flight: \(delivery.maxSendsInFlight)")
        lines.append("  partition_buffer: \(delivery.partitionBuffer)")
        lines.append("  commit_interval_ms: \(ms(delivery.commitInterval))")
        lines.append("  commit_every_events: \(delivery.commitEveryEvents)")
        lines.append("  offset_map: \(delivery.offsetMap)")
        lines.append("  unknown_event_types: \(delivery.unknownEventTypes.rawValue)")
        lines.append("  shutdown_timeout_ms: \(ms(delivery.shutdownTimeout))")
        lines.append("http:")
        lines.append("  listen: \(http.listen.map { q("\($0.host):\($0.port)") } ?? "off")")
        lines.append("log:")
        lines.append("  level: \(log.level.rawValue)")
        lines.append("  format: \(log.format.rawValue)")
        return lines.joined(separator: "\n") + "\n"
    }
}
