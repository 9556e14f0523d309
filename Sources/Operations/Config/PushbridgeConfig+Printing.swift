/// `pushbridge run --print-config`: the effective values (file, environment, defaults) in the
/// config file's own layout, with secret Kafka properties replaced by `<redacted>`, so the output
/// can be pasted into a ticket.
extension PushbridgeConfig {
    /// Kafka properties whose values are credentials.
    public static func isSecretProperty(_ name: String) -> Bool {
        let n = name.lowercased()
        return n.contains("password") || n.contains("secret") || n.hasSuffix(".key.pem") || n == "sasl.oauthbearer.config"
    }

    /// Every key in ``ConfigSchema/keys``' order, each section's name above its first key.
    public var printed: String {
        var lines: [String] = []
        var open: [Substring] = []
        for key in ConfigSchema.keys {
            let path = key.name.split(separator: ".")
            let sections = path.dropLast()
            let kept = zip(open, sections).prefix { $0 == $1 }.count
            for (depth, section) in sections.enumerated().dropFirst(kept) {
                lines.append(String(repeating: "  ", count: depth) + "\(section):")
            }
            open = Array(sections)
            let indent = String(repeating: "  ", count: sections.count)
            let value = key.value(self)
            if case .projects(let projects) = value, !projects.isEmpty {
                lines.append(indent + "\(path.last!):")
                for (name, project) in projects.sorted(by: { $0.key < $1.key }) {
                    lines.append(indent + "  \(Self.quoted(name)):")
                    lines.append(indent + "    service_account: \(Self.quoted(project.serviceAccountFile))")
                    lines.append(indent + "    max_sends_per_second: \(project.maxSendsPerSecond.map { String($0) } ?? "null")")
                    lines.append(indent + "    project_sends_per_second: \(project.projectSendsPerSecond.map { String($0) } ?? "null")")
                }
            } else if case .map(let map) = value, !map.isEmpty {
                lines.append(indent + "\(path.last!):")
                // librdkafka's properties may hold credentials; a word map's keys are topics.
                let properties = key.kind == .map
                for (name, value) in map.sorted(by: { $0.key < $1.key }) {
                    let shown = properties && Self.isSecretProperty(name) ? "<redacted>" : properties ? Self.quoted(value) : value
                    lines.append(indent + "  \(properties ? name : Self.quoted(name)): \(shown)")
                }
            } else {
                lines.append(indent + "\(path.last!): \(Self.yaml(value))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func yaml(_ value: ConfigSchema.Value) -> String {
        switch value {
        case .null: "null"
        case .string(let s): quoted(s)
        case .word(let s): s
        case .strings(let items): "[" + items.map(quoted).joined(separator: ", ") + "]"
        case .int, .double, .bool: value.text
        case .map, .projects: "{}"
        }
    }

    private static func quoted(_ s: String) -> String {
        // Plain only when YAML reads it back as the same string: no indicator may start it.
        let plain =
            (s.first.map { $0.isLetter || $0.isNumber || "/.".contains($0) } ?? false)
            && s.allSatisfy { $0.isLetter || $0.isNumber || "-_./:@".contains($0) }
            && !["true", "false", "null", "yes", "no", "on", "off", "~"].contains(s.lowercased())
        return plain ? s : "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
