import Configuration
import Dates
import Foundation
import Mapping
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
    /// The line of each key the file sets: a value refused after the file's checks (http.listen's
    /// form) is reported there.
    var lines: [String: Int] = [:]
    var properties: [String: String] = [:]
    /// `fcm.projects` as the file names them, paths resolved.
    var projects: [String: PushbridgeConfig.Project] = [:]
    /// `.wordMap` keys as written (`kafka.value_formats`), by key.
    var wordMaps: [String: [String: String]] = [:]

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
        var config = build(reader)
        resolveEgressProxy(&config)
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
            guard let kind = ConfigSchema.named[path]?.kind else {
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
        case .projects:
            guard case .mapping(let m) = node else { return wrong() }
            for (k, v) in m { readProject(k, v) }
            return nil
        case .wordMap(let words):
            guard case .mapping(let m) = node else { return wrong() }
            for (k, v) in m {
                guard let name = k.string, !name.isEmpty, case .scalar(let s) = v, words.contains(s.string) else {
                    problems.append(.init(location: at(v), message: "\(path).\(k.string ?? "?") must be one of \(words.joined(separator: ", "))"))
                    continue
                }
                wordMaps[path, default: [:]][name] = s.string
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
        var config = PushbridgeConfig()
        let resolve = { [file] (path: String) in Self.resolve(path, against: file) }
        for key in ConfigSchema.keys {
            // The properties map is gathered from the file and PUSHBRIDGE_KAFKA_PROPERTIES_* by hand:
            // swift-configuration reads scalars and lists.
            let value: ConfigSchema.Value? =
                switch key.kind {
                case .map: .map(properties)
                case .projects: .projects(projects)
                case .wordMap: .map(wordMaps[key.name] ?? [:])
                default: read(reader, key)
                }
            guard let value else { continue }
            if !key.store(&config, value, resolve) {
                problems.append(.init(location: location(of: key.name), message: "\(key.name) must be \(key.format), got \"\(key.shown(value))\""))
            }
        }
        for key in ConfigSchema.required where !has(key) {
            problems.append(.init(location: file, message: "\(key) is required (or set \(ConfigSchema.environmentName(key)))"))
        }
        checkProjects(config)
        checkValueFormats(config)
        checkTimeZone(config)
        checkRulesSource(config)
        checkTimers(config)
        return config
    }

    /// A path from the file, as it means it: relative ones against the file's directory.
    static func resolve(_ path: String, against file: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        return URL(fileURLWithPath: file).deletingLastPathComponent().appendingPathComponent(path).standardizedFileURL.path
    }

    private func has(_ key: String) -> Bool {
        values[AbsoluteConfigKey(key.split(separator: ".").map(String.init))] != nil || environment[ConfigSchema.environmentName(key)] != nil
    }

    /// Where a value the loader refuses came from: the environment wins over the file.
    private func location(of key: String) -> String {
        let name = ConfigSchema.environmentName(key)
        return environment[name] != nil ? name : lines[key].map { "\(file):\($0)" } ?? file
    }

    /// The key's value, environment over file, or nil (unset, or not of its kind: the checks of
    /// the file and the environment have reported that already).
    private func read(_ r: ConfigReader, _ key: ConfigSchema.Key) -> ConfigSchema.Value? {
        let name = ConfigKey(key.name)
        switch key.kind {
        case .string: return r.string(forKey: name).flatMap { $0.isEmpty ? nil : .string($0) }
        case .oneOf(let allowed): return r.string(forKey: name).flatMap { allowed.contains($0) ? .string($0) : nil }
        case .stringList: return r.stringArray(forKey: name).flatMap { !$0.isEmpty && $0.allSatisfy { !$0.isEmpty } ? .strings($0) : nil }
        case .int(let min): return r.int(forKey: name).flatMap { $0 >= min ? .int($0) : nil }
        case .double: return r.double(forKey: name).flatMap { $0 > 0 ? .double($0) : nil }
        case .bool: return r.bool(forKey: name).map { .bool($0) }
        case .map, .projects, .wordMap: return nil
        }
    }
}

// MARK: fcm.projects

extension ConfigFileLoader {
    /// One entry of `fcm.projects`: a name mappings can use, and its settings, each checked
    /// where it is written.
    fileprivate mutating func readProject(_ keyNode: Node, _ value: Node) {
        guard let name = keyNode.string, ProjectName.isValid(name) else {
            problems.append(
                .init(
                    location: at(keyNode),
                    message: "fcm.projects: \"\(keyNode.string ?? "?")\" is not a project name (1-100 of letters, digits, - _ .)"))
            return
        }
        guard case .mapping(let settings) = value else {
            problems.append(.init(location: at(value), message: "fcm.projects.\(name) must be a map with service_account"))
            return
        }
        var fields: [String: ConfigContent] = [:]
        for (fieldNode, fieldValue) in settings {
            let field = fieldNode.string ?? "?"
            guard let kind = ConfigSchema.projectFields.first(where: { $0.name == field })?.kind else {
                let known = ConfigSchema.projectFields.map(\.name).joined(separator: ", ")
                problems.append(.init(location: at(fieldNode), message: "unknown key fcm.projects.\(name).\(field) (a project has \(known))"))
                continue
            }
            if isNull(fieldValue) { continue }
            if let content = convert(fieldValue, kind: kind, path: "fcm.projects.\(name).\(field)") { fields[field] = content }
        }
        guard case .string(let account)? = fields["service_account"] else {
            if !settings.contains(where: { $0.key.string == "service_account" && !isNull($0.value) }) {
                problems.append(.init(location: at(keyNode), message: "fcm.projects.\(name) has no service_account"))
            }
            return
        }
        func number(_ field: String) -> Double? {
            if case .double(let d)? = fields[field] { d } else { nil }
        }
        projects[name] = PushbridgeConfig.Project(
            serviceAccountFile: Self.resolve(account, against: file), maxSendsPerSecond: number("max_sends_per_second"),
            projectSendsPerSecond: number("project_sends_per_second"))
    }

    /// Topics read as Schema Registry records need a registry: refused here, not one record at a time.
    fileprivate mutating func checkValueFormats(_ config: PushbridgeConfig) {
        let needing = config.kafka.valueFormats.filter { $0.value == .avro || $0.value == .protobuf }.keys.sorted()
        guard !needing.isEmpty, config.schemaRegistry.url == nil else { return }
        problems.append(
            .init(
                location: location(of: "kafka.value_formats"),
                message: "kafka.value_formats reads \(needing.joined(separator: ", ")) as Schema Registry records, and schema_registry.url is not set"
            ))
    }

    /// `rules.default_time_zone` must be a zone this machine's tzdata knows: refused here, not
    /// judged wrong for every user without a zone of their own.
    fileprivate mutating func checkTimeZone(_ config: PushbridgeConfig) {
        let name = config.rules.defaultTimeZone
        guard TimeZoneDatabase.shared.zone(named: name) == nil else { return }
        problems.append(
            .init(
                location: location(of: "rules.default_time_zone"),
                message:
                    "rules.default_time_zone \"\(name)\" is not a time zone this machine knows: give an IANA name such as Europe/Berlin (from the system's tzdata, \(TimeZoneDatabase.shared.directory))"
            ))
    }

    /// `rules.source.keyed_by: user` says one topic is keyed by user: its producers' partitioner
    /// must be named, or no record could be checked to be in its user's partition.
    fileprivate mutating func checkRulesSource(_ config: PushbridgeConfig) {
        guard config.rules.keyedBy == .user else { return }
        if config.rules.partitioner == nil {
            problems.append(
                .init(
                    location: location(of: "rules.source.keyed_by"),
                    message:
                        "rules.source.keyed_by: user needs rules.source.partitioner, how the topic's producers partition by key: murmur2 (Java, franz-go), consistent (librdkafka's default) or fnv1a"
                ))
        }
        if config.kafka.topics.count != 1 || config.kafka.topics.contains(where: { $0.hasPrefix("^") }) {
            problems.append(
                .init(
                    location: location(of: "kafka.topics"),
                    message:
                        "rules.source.keyed_by: user needs exactly one topic in kafka.topics (no pattern): a user's events on two topics would be counted in two partitions, and a cap across them would not hold"
                ))
        }
    }

    /// The timer ladder's levels hold 2^k s for k < 31 (Int32 seconds), and its partitions are
    /// an Int32: refused here rather than trapping when a mapping first defers.
    fileprivate mutating func checkTimers(_ config: PushbridgeConfig) {
        let (levels, buckets) = (config.timers.levels, config.timers.buckets)
        if levels > 31 {
            problems.append(
                .init(location: location(of: "timers.levels"), message: "timers.levels is \(levels); at most 31 (level 30 holds a record 34 years)"))
        } else if buckets > Int(Int32.max) / max(levels, 1) {
            problems.append(
                .init(location: location(of: "timers.buckets"), message: "timers.levels × timers.buckets must be a partition count Kafka can have"))
        }
    }

    /// `fcm.projects` against the keys it excludes or names.
    fileprivate mutating func checkProjects(_ config: PushbridgeConfig) {
        let fcm = config.fcm
        if !fcm.projects.isEmpty, fcm.serviceAccountFile != nil {
            problems.append(
                .init(
                    location: location(of: "fcm.service_account"),
                    message: "fcm.service_account and fcm.projects cannot both be set: with several projects, each names its own service_account"))
        }
        if let name = fcm.defaultProject, fcm.projects[name] == nil {
            let known = fcm.projects.isEmpty ? "fcm.projects is not set" : "fcm.projects has " + fcm.projects.keys.sorted().joined(separator: ", ")
            problems.append(
                .init(location: location(of: "fcm.default_project"), message: "fcm.default_project \"\(name)\" is not a project: \(known)"))
        }
    }
}
