import Configuration
import Foundation
import Logging
import Yams

/// Why a config could not be loaded: every problem, each with where it is.
public struct ConfigError: Error, CustomStringConvertible, Sendable {
    public struct Problem: Sendable, CustomStringConvertible {
        /// `file:line` or the environment variable's name.
        public var location: String
        public var message: String
        public var description: String { "\(location): \(message)" }
    }

    public var problems: [Problem]
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

extension PushbridgeConfig {
    /// Loads `file` (YAML or JSON) and applies `PUSHBRIDGE_*` overrides from `environment`.
    ///
    /// The file is checked against ``ConfigSchema`` first (unknown keys with a suggestion,
    /// wrong types, out-of-range values, each with its line); values are then read through
    /// swift-configuration with the environment ahead of the file, and defaults after both.
    public static func load(file: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws(ConfigError) -> PushbridgeConfig
    {
        var loader = ConfigFileLoader(file: file, environment: environment)
        return try loader.load()
    }
}

struct ConfigFileLoader {
    let file: String
    let environment: [String: String]
    var problems: [ConfigError.Problem] = []
    /// Scalar values from the file, by dotted key.
    var values: [AbsoluteConfigKey: ConfigValue] = [:]
    var lines: [String: Int] = [:]
    var properties: [String: String] = [:]

    init(file: String, environment: [String: String]) {
        self.file = file
        self.environment = environment
    }

    mutating func load() throws(ConfigError) -> PushbridgeConfig {
        guard let data = FileManager.default.contents(atPath: file), let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(problems: [.init(location: file, message: "cannot read the config file")])
        }
        do {
            if let root = try Yams.compose(yaml: text) {
                guard case .mapping(let mapping) = root else {
                    throw ConfigError(problems: [.init(location: at(root), message: "the config must be a map of sections (kafka, mappings, fcm, …)")]
                    )
                }
                walk(mapping, prefix: "")
            }
        } catch let error as ConfigError {
            throw error
        } catch let error as YamlError {
            throw ConfigError(problems: [.init(location: file, message: "not valid YAML or JSON: \(error)")])
        } catch {
            throw ConfigError(problems: [.init(location: file, message: "\(error)")])
        }
        let env = EnvironmentVariablesProvider(environmentVariables: environment).prefixKeys(with: "pushbridge")
        let reader = ConfigReader(providers: [env, InMemoryProvider(name: file, values: values)])
        validateEnvironment()
        readEnvironmentProperties()
        let config = build(reader)
        guard problems.isEmpty else { throw ConfigError(problems: problems) }
        return config
    }

    // MARK: The file

    private func at(_ node: Node) -> String {
        node.mark.map { "\(file):\($0.line)" } ?? file
    }

    private mutating func walk(_ mapping: Node.Mapping, prefix: String) {
        for (keyNode, value) in mapping {
            guard let key = keyNode.string else {
                problems.append(.init(location: at(keyNode), message: "keys must be strings"))
                continue
            }
            let path = prefix.isEmpty ? key : "\(prefix).\(key)"
            if ConfigSchema.sections.contains(path) {
                if case .mapping(let inner) = value {
                    walk(inner, prefix: path)
                } else if !isNull(value) {
                    problems.append(.init(location: at(value), message: "\(path) must be a map of settings"))
                }
                continue
            }
            guard let kind = ConfigSchema.keys[path] else {
                let hint = ConfigSchema.suggestion(for: path).map { " (did you mean \($0)?)" } ?? ""
                problems.append(.init(location: at(keyNode), message: "unknown key \(path)\(hint)"))
                continue
            }
            lines[path] = keyNode.mark?.line
            if isNull(value) { continue }
            if let content = convert(value, kind: kind, path: path) {
                values[AbsoluteConfigKey(path.split(separator: ".").map(String.init))] = ConfigValue(content, isSecret: false)
            }
        }
    }

    private func isNull(_ node: Node) -> Bool {
        guard case .scalar(let s) = node else { return false }
        return s.style == .plain && ["", "~", "null", "Null", "NULL"].contains(s.string)
    }

    private mutating func convert(_ node: Node, kind: ConfigSchema.Kind, path: String) -> ConfigContent? {
        func wrong() -> ConfigContent? {
            problems.append(.init(location: at(node), message: "\(path) must be \(kind.expected)"))
            return nil
        }
        switch kind {
        case .map:
            guard case .mapping(let m) = node else { return wrong() }
            for (k, v) in m {
                guard let name = k.string, case .scalar(let s) = v else { return wrong() }
                properties[name] = s.string
                if let refusal = Self.refusal(property: name, value: s.string) { problems.append(.init(location: at(v), message: refusal)) }
            }
            return nil
        case .stringList:
            guard case .sequence(let items) = node else { return wrong() }
            var strings: [String] = []
            for item in items {
                guard case .scalar(let s) = item, !s.string.isEmpty else { return wrong() }
                strings.append(s.string)
            }
            return .stringArray(strings)
        case .string:
            guard case .scalar(let s) = node else { return wrong() }
            return .string(s.string)
        case .oneOf(let allowed):
            guard case .scalar(let s) = node, allowed.contains(s.string) else { return wrong() }
            return .string(s.string)
        case .int(let min):
            guard case .scalar(let s) = node, s.style == .plain, let i = Int(s.string), i >= min else { return wrong() }
            return .int(i)
        case .double:
            guard case .scalar(let s) = node, s.style == .plain, let d = Double(s.string), d > 0 else { return wrong() }
            return .double(d)
        case .bool:
            guard case .scalar(let s) = node, s.style == .plain, let b = Bool(s.string) else { return wrong() }
            return .bool(b)
        }
    }

    // MARK: Values (environment over file over defaults)

    private mutating func build(_ reader: ConfigReader) -> PushbridgeConfig {
        var c = PushbridgeConfig()
        func ms(_ key: String, _ current: Duration) -> Duration {
            int(reader, key).map { .milliseconds($0) } ?? current
        }
        c.kafka.brokers = strings(reader, "kafka.brokers") ?? []
        c.kafka.group = string(reader, "kafka.group") ?? c.kafka.group
        c.kafka.instanceID = string(reader, "kafka.instance_id")
        c.kafka.topics = strings(reader, "kafka.topics") ?? []
        c.kafka.assignmentStrategy = string(reader, "kafka.assignment_strategy") ?? c.kafka.assignmentStrategy
        c.kafka.sessionTimeout = ms("kafka.session_timeout_ms", c.kafka.sessionTimeout)
        c.kafka.properties = properties

        let base = URL(fileURLWithPath: file).deletingLastPathComponent()
        func resolve(_ path: String) -> String {
            path.hasPrefix("/") ? path : base.appendingPathComponent(path).standardizedFileURL.path
        }
        c.mappings = (strings(reader, "mappings") ?? []).map(resolve)

        c.fcm.serviceAccountFile = string(reader, "fcm.service_account").map(resolve)
        c.fcm.endpoint = string(reader, "fcm.endpoint") ?? c.fcm.endpoint
        c.fcm.caFile = string(reader, "fcm.ca_file").map(resolve)
        c.fcm.validateOnly = bool(reader, "fcm.validate_only") ?? false
        c.fcm.maxStreams = int(reader, "fcm.max_streams") ?? c.fcm.maxStreams
        c.fcm.connections = int(reader, "fcm.connections") ?? c.fcm.connections
        c.fcm.maxSendsPerSecond = double(reader, "fcm.max_sends_per_second")
        c.fcm.projectSendsPerSecond = double(reader, "fcm.project_sends_per_second")
        c.fcm.requestTimeout = ms("fcm.request_timeout_ms", c.fcm.requestTimeout)
        c.fcm.retry.maxAttempts = int(reader, "fcm.retry.max_attempts")
        c.fcm.retry.initialBackoff = ms("fcm.retry.initial_backoff_ms", c.fcm.retry.initialBackoff)
        c.fcm.retry.maxBackoff = ms("fcm.retry.max_backoff_ms", c.fcm.retry.maxBackoff)
        c.fcm.retry.budget = ms("fcm.retry.budget_ms", c.fcm.retry.budget)
        c.fcm.retry.quotaPause = ms("fcm.retry.quota_pause_ms", c.fcm.retry.quotaPause)

        c.topics.deadLetter = string(reader, "topics.dead_letter") ?? c.topics.deadLetter
        c.topics.tokenInvalidation = string(reader, "topics.token_invalidation") ?? c.topics.tokenInvalidation

        c.delivery.maxEventsInFlight = int(reader, "delivery.max_events_in_flight") ?? c.delivery.maxEventsInFlight
        c.delivery.maxSendsInFlight = int(reader, "delivery.max_sends_in_flight") ?? c.delivery.maxSendsInFlight
        c.delivery.partitionBuffer = int(reader, "delivery.partition_buffer") ?? c.delivery.partitionBuffer
        c.delivery.commitInterval = ms("delivery.commit_interval_ms", c.delivery.commitInterval)
        c.delivery.commitEveryEvents = int(reader, "delivery.commit_every_events") ?? c.delivery.commitEveryEvents
        c.delivery.offsetMap = bool(reader, "delivery.offset_map") ?? true
        if let u = string(reader, "delivery.unknown_event_types") { c.delivery.unknownEventTypes = .init(rawValue: u) ?? .skip }
        c.delivery.shutdownTimeout = ms("delivery.shutdown_timeout_ms", c.delivery.shutdownTimeout)

        if let listen = string(reader, "http.listen") { c.http.listen = parseListen(listen) }
        if let level = string(reader, "log.level") { c.log.level = Logger.Level(rawValue: level) ?? .info }
        if let format = string(reader, "log.format") { c.log.format = LogFormat(rawValue: format) ?? .json }

        for key in ConfigSchema.required where !has(key) {
            problems.append(.init(location: file, message: "\(key) is required (or set \(ConfigSchema.environmentName(key)))"))
        }
        return c
    }

    private func has(_ key: String) -> Bool {
        values[AbsoluteConfigKey(key.split(separator: ".").map(String.init))] != nil || environment[ConfigSchema.environmentName(key)] != nil
    }

    private func key(_ path: String) -> ConfigKey { ConfigKey(path) }

    /// Every `PUSHBRIDGE_*` override must parse as its key's kind; a bad one is a problem, not
    /// a silent fallback to the file or the default.
    mutating func validateEnvironment() {
        for (path, kind) in ConfigSchema.keys.sorted(by: { $0.key < $1.key }) {
            let name = ConfigSchema.environmentName(path)
            guard let raw = environment[name] else { continue }
            let ok: Bool =
                switch kind {
                case .string: !raw.isEmpty
                case .stringList:
                    !raw.split(separator: ",").isEmpty && raw.split(separator: ",", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty }
                case .int(let min): Int(raw).map { $0 >= min } ?? false
                case .double: Double(raw).map { $0 > 0 } ?? false
                case .bool: ["true", "false", "yes", "no", "1", "0"].contains(raw.lowercased())
                case .oneOf(let values): values.contains(raw)
                case .map: false
                }
            if !ok {
                let what =
                    kind == .map
                    ? "cannot be set as a whole; set one property as \(Self.propertyPrefix)NAME (sasl.password: \(Self.propertyPrefix)SASL_PASSWORD)"
                    : "must be \(kind.expected), got \"\(raw)\""
                problems.append(.init(location: name, message: "\(path) \(what)"))
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

    private func check<T>(_ value: T?, _ path: String, valid: (T) -> Bool = { _ in true }) -> T? {
        guard let value, valid(value) else { return nil }
        return value
    }

    private func string(_ r: ConfigReader, _ path: String) -> String? {
        let allowed: [String]? = if case .oneOf(let values)? = ConfigSchema.keys[path] { values } else { nil }
        return check(r.string(forKey: key(path)), path) { v in !v.isEmpty && (allowed?.contains(v) ?? true) }
    }

    private func strings(_ r: ConfigReader, _ path: String) -> [String]? {
        check(r.stringArray(forKey: key(path)), path) { !$0.isEmpty && $0.allSatisfy { !$0.isEmpty } }
    }

    private func int(_ r: ConfigReader, _ path: String) -> Int? {
        guard case .int(let min)? = ConfigSchema.keys[path] else { return nil }
        return check(r.int(forKey: key(path)), path) { $0 >= min }
    }

    private func double(_ r: ConfigReader, _ path: String) -> Double? {
        check(r.double(forKey: key(path)), path) { $0 > 0 }
    }

    private func bool(_ r: ConfigReader, _ path: String) -> Bool? {
        check(r.bool(forKey: key(path)), path)
    }

    private mutating func parseListen(_ text: String) -> (host: String, port: Int)? {
        if text == "off" { return nil }
        if let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) {
            let host = String(text[..<colon])
            return (host.isEmpty ? "0.0.0.0" : host, port)
        }
        let location =
            environment[ConfigSchema.environmentName("http.listen")] != nil
            ? ConfigSchema.environmentName("http.listen") : lines["http.listen"].map { "\(file):\($0)" } ?? file
        problems.append(.init(location: location, message: "http.listen must be host:port (e.g. 0.0.0.0:9464) or off, got \"\(text)\""))
        return nil
    }
}
