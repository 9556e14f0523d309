/// `PUSHBRIDGE_*` overrides: checked against their keys' kinds before swift-configuration reads
/// them, and the Kafka properties one variable per property.
extension ConfigFileLoader {
    /// Every `PUSHBRIDGE_*` override must parse as its key's kind; a bad one is a problem, not
    /// a silent fallback to the file or the default.
    mutating func validateEnvironment() {
        for key in ConfigSchema.keys.sorted(by: { $0.name < $1.name }) {
            let name = ConfigSchema.environmentName(key.name)
            guard let raw = environment[name] else { continue }
            let ok: Bool =
                switch key.kind {
                case .string: !raw.isEmpty
                case .stringList:
                    !raw.split(separator: ",").isEmpty && raw.split(separator: ",", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty }
                case .int(let min): Int(raw).map { $0 >= min } ?? false
                case .double: Double(raw).map { $0 > 0 } ?? false
                case .bool: ["true", "false", "yes", "no", "1", "0"].contains(raw.lowercased())
                case .oneOf(let values): values.contains(raw)
                case .map, .projects, .wordMap: false
                }
            if !ok {
                let what =
                    switch key.kind {
                    case .map:
                        "cannot be set as a whole; set one property as \(Self.propertyPrefix)NAME (sasl.password: \(Self.propertyPrefix)SASL_PASSWORD)"
                    case .projects: "cannot be set from the environment; name the projects in the config file"
                    case .wordMap: "cannot be set from the environment; set it in the config file"
                    default: "must be \(key.kind.expected), got \"\(raw)\""
                    }
                problems.append(.init(location: name, message: "\(key.name) \(what)"))
            }
        }
    }

    static let propertyPrefix = ConfigSchema.environmentName("kafka.properties") + "_"

    /// `PUSHBRIDGE_KAFKA_PROPERTIES_SASL_PASSWORD=…` sets the librdkafka property `sasl.password`
    /// (lower-cased, underscores to dots; librdkafka's names have no underscores). This is how a
    /// Kubernetes Secret reaches the Kafka client without templating the config file.
    mutating func readEnvironmentProperties() {
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix(Self.propertyPrefix) {
            let property = name.dropFirst(Self.propertyPrefix.count).lowercased().replacingOccurrences(of: "_", with: ".")
            guard !property.isEmpty, !value.isEmpty else {
                problems.append(.init(location: name, message: "a Kafka property needs a name and a value"))
                continue
            }
            properties[property] = value
            if let refusal = Self.refusal(property: property, value: value) { problems.append(.init(location: name, message: refusal)) }
        }
    }

    /// Why a Kafka property would break at-least-once delivery, if it would.
    static func refusal(property: String, value: String) -> String? {
        guard ["acks", "request.required.acks"].contains(property), !["all", "-1"].contains(value.lowercased()) else { return nil }
        return """
            kafka.properties.\(property) must be all (or -1), got \(value): an event is committed past once its \
            dead-letter record is acknowledged, so the acknowledgement must mean every in-sync replica has it
            """
    }
}
