import Configuration
import Foundation
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
        let base = URL(fileURLWithPath: file).deletingLastPathComponent()
        let resolve = { (path: String) in path.hasPrefix("/") ? path : base.appendingPathComponent(path).standardizedFileURL.path }
        for key in ConfigSchema.keys {
            // The properties map is gathered from the file and PUSHBRIDGE_KAFKA_PROPERTIES_* by hand:
            // swift-configuration reads scalars and lists.
            guard let value = key.kind == .map ? .map(properties) : read(reader, key) else { continue }
            if !key.store(&config, value, resolve) {
                problems.append(.init(location: location(of: key.name), message: "\(key.name) must be \(key.format), got \"\(key.shown(value))\""))
            }
        }
        for key in ConfigSchema.required where !has(key) {
            problems.append(.init(location: file, message: "\(key) is required (or set \(ConfigSchema.environmentName(key)))"))
        }
        return config
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
        case .map: return nil
        }
    }
}
