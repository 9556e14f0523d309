import Foundation
import TestSupport
import Testing

@testable import Operations

/// Every config key is declared once, in `ConfigSchema.keys` (name, kind and range, its field
/// and so its default, its doc line; the environment name follows from the name), and the loader
/// and `--print-config` work through it. The places written by hand are checked against it here:
/// the JSON Schema editors use, the docs table and the commented example. Each failure names the
/// place and the key.
@Suite("Config keys: one declaration, checked everywhere")
struct ConfigDeclarationTests {
    static let declared = Set(ConfigSchema.keys.map(\.name))
    static let schemaFile = "schemas/config.schema.json"
    static let docsFile = "docs/configuration.md"
    static let exampleFile = "examples/config/pushbridge.yaml"

    /// The JSON Schema's leaf keys (dotted) and their specs, and the leaf keys it requires.
    static func schema() throws -> (keys: [String: [String: Any]], required: Set<String>) {
        let data = try Data(contentsOf: URL(fileURLWithPath: Repository.root + "/" + schemaFile))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var keys: [String: [String: Any]] = [:]
        var required: Set<String> = []
        func walk(_ node: [String: Any], _ prefix: String) {
            let path = { (name: String) in prefix.isEmpty ? name : "\(prefix).\(name)" }
            required.formUnion((node["required"] as? [String] ?? []).map(path).filter { !ConfigSchema.sections.contains($0) })
            for (name, value) in node["properties"] as? [String: [String: Any]] ?? [:] {
                if ConfigSchema.sections.contains(path(name)) { walk(value, path(name)) } else { keys[path(name)] = value }
            }
        }
        walk(root, "")
        return (keys, required)
    }

    /// docs/configuration.md's table: key → its default column.
    static func documentedDefaults() throws -> [String: String] {
        let text = try String(contentsOfFile: Repository.root + "/" + docsFile, encoding: .utf8)
        var out: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 3, cells[1].hasPrefix("`"), cells[1].hasSuffix("`") else { continue }
            out[String(cells[1].dropFirst().dropLast())] = cells[2]
        }
        return out
    }

    /// The keys the commented example sets, as the loader found them.
    static func exampleKeys() throws -> Set<String> {
        var loader = ConfigFileLoader(file: Repository.root + "/" + exampleFile, environment: [:])
        _ = try loader.load()
        return Set(loader.lines.keys)
    }

    /// The keys `--print-config` prints (of the defaults).
    static func printedKeys() -> Set<String> {
        var keys: Set<String> = []
        var sections: [String] = []
        for line in PushbridgeConfig().printed.split(separator: "\n") {
            let depth = line.prefix { $0 == " " }.count / 2
            let body = line.drop { $0 == " " }
            guard let colon = body.firstIndex(of: ":") else { continue }
            let name = String(body[..<colon])
            sections = Array(sections.prefix(depth))
            let key = (sections + [name]).joined(separator: ".")
            if body[body.index(after: colon)...].isEmpty { sections.append(name) } else { keys.insert(key) }
        }
        return keys
    }

    /// A key's default: its field's value in a fresh config, nil for a required key.
    static func declaredDefault(_ key: ConfigSchema.Key) -> ConfigSchema.Value? {
        key.required ? nil : key.value(PushbridgeConfig())
    }

    @Test("the JSON Schema, the docs table, the example and --print-config name exactly the declared keys")
    func sameKeys() throws {
        let places = [
            (Self.schemaFile, Set(try Self.schema().keys.keys)), (Self.docsFile, Set(try Self.documentedDefaults().keys)),
            (Self.exampleFile, try Self.exampleKeys()), ("--print-config", Self.printedKeys()),
        ]
        for (place, keys) in places {
            let missing = Self.declared.subtracting(keys).sorted()
            let undeclared = keys.subtracting(Self.declared).sorted()
            #expect(missing.isEmpty && undeclared.isEmpty, "\(place) lacks \(missing), has undeclared \(undeclared)")
        }
    }

    @Test("the JSON Schema gives each key the declared type, range, values, default, description and requirement")
    func schemaAgrees() throws {
        let (schema, required) = try Self.schema()
        #expect(required == Set(ConfigSchema.required), "\(Self.schemaFile) requires \(required.sorted()), declared \(ConfigSchema.required)")
        for key in ConfigSchema.keys {
            guard let spec = schema[key.name] else { continue }  // sameKeys() names it
            let place = "\(Self.schemaFile): \(key.name)"
            let types = Set((spec["type"] as? [String]) ?? [spec["type"] as? String].compactMap { $0 })
            switch key.kind {
            case .string: #expect(types.contains("string"), "\(place) has type \(types.sorted()), declared a string")
            case .stringList: #expect(types.contains("array"), "\(place) has type \(types.sorted()), declared a list")
            case .int(let min):
                #expect(types.contains("integer"), "\(place) has type \(types.sorted()), declared an integer")
                #expect(spec["minimum"] as? Int == min, "\(place) has minimum \(spec["minimum"] ?? "none"), declared \(min)")
            case .double:
                #expect(types.contains("number"), "\(place) has type \(types.sorted()), declared a number")
                #expect(spec["exclusiveMinimum"] as? Int == 0, "\(place) lacks exclusiveMinimum 0: the loader takes only numbers > 0")
            case .bool: #expect(types.contains("boolean"), "\(place) has type \(types.sorted()), declared true or false")
            case .oneOf(let values):
                // A key whose default is null lists null among its values.
                let listed = (spec["enum"] as? [Any])?.compactMap { $0 as? String }
                #expect(listed == values, "\(place) has enum \(spec["enum"] ?? "none"), declared \(values)")
            case .map, .projects: #expect(types.contains("object"), "\(place) has type \(types.sorted()), declared a map")
            case .wordMap(let values):
                #expect(types.contains("object"), "\(place) has type \(types.sorted()), declared a map")
                let allowed = (spec["additionalProperties"] as? [String: Any])?["enum"] as? [String]
                #expect(allowed == values, "\(place) allows \(allowed ?? []), declared \(values)")
            }
            let declared = Self.declaredDefault(key)
            let enumAllowsNull = (spec["enum"] as? [Any])?.contains { $0 is NSNull } ?? false
            if declared == .null { #expect(types.contains("null") || enumAllowsNull, "\(place) must allow null: its default is null") }
            let json = try spec["default"].map(Self.jsonText)
            let expected = try declared.flatMap { $0 == .null ? nil : try Self.jsonText(Self.json($0)) }
            #expect(json == expected, "\(place) has default \(json ?? "none"), declared \(expected ?? "none")")
            #expect(spec["description"] as? String == key.doc, "\(place) has description \(spec["description"] ?? "none"), declared \"\(key.doc)\"")
        }
    }

    /// The table's default column gives the declared default as a literal (a number or `code`),
    /// `required` for a required key, and says in words what stands in for a null one.
    @Test("the docs table's default column is the declared default")
    func docsAgree() throws {
        let documented = try Self.documentedDefaults()
        for key in ConfigSchema.keys {
            guard let cell = documented[key.name] else { continue }  // sameKeys() names it
            let place = "\(Self.docsFile): \(key.name)'s default"
            switch Self.declaredDefault(key) {
            case nil: #expect(cell == "required", "\(place) is \(cell), declared required")
            case .null?: #expect(cell != "required" && Int(cell) == nil, "\(place) is \(cell), declared none (null)")
            case let value?:
                let literal = cell.hasPrefix("`") && cell.hasSuffix("`") ? String(cell.dropFirst().dropLast()) : cell
                #expect(literal == value.text, "\(place) is \(cell), declared \(value.text)")
            }
        }
    }

    static func json(_ value: ConfigSchema.Value) -> Any {
        switch value {
        case .null: NSNull()
        case .string(let s), .word(let s): s
        case .strings(let items): items
        case .int(let i): i
        case .double(let d): d
        case .bool(let b): b
        case .map(let m): m
        case .projects(let p): p.mapValues { ["service_account": $0.serviceAccountFile] }
        }
    }

    /// As JSON text, so values compare whatever Foundation parsed them into (a boolean is an NSNumber).
    static func jsonText(_ value: Any) throws -> String {
        let data = try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
