import Foundation
import TestSupport
import Testing

@testable import Operations

/// Every config key is declared once, in `ConfigSchema.keys` (name and kind; the environment
/// name follows from the name). The other places that name keys are checked against it: the
/// JSON Schema editors use, the docs table, and `--print-config`. Adding a key anywhere but
/// everywhere fails here, naming the place that lacks it.
@Suite("Config keys: one declaration, checked everywhere")
struct ConfigDeclarationTests {
    static let declared = Set(ConfigSchema.keys.keys)

    /// schemas/config.schema.json: leaf keys (dotted) and their specs.
    static func schemaKeys() throws -> [String: [String: Any]] {
        let data = try Data(contentsOf: URL(fileURLWithPath: Repository.root + "/schemas/config.schema.json"))
        let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        var out: [String: [String: Any]] = [:]
        func walk(_ node: [String: Any], _ prefix: String) {
            for (name, value) in node["properties"] as? [String: [String: Any]] ?? [:] {
                let key = prefix.isEmpty ? name : "\(prefix).\(name)"
                if ConfigSchema.sections.contains(key) { walk(value, key) } else { out[key] = value }
            }
        }
        walk(root, "")
        return out
    }

    /// docs/configuration.md's table: key → its default column.
    static func documentedDefaults() throws -> [String: String] {
        let text = try String(contentsOfFile: Repository.root + "/docs/configuration.md", encoding: .utf8)
        var out: [String: String] = [:]
        for line in text.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 3, cells[1].hasPrefix("`"), cells[1].hasSuffix("`") else { continue }
            out[String(cells[1].dropFirst().dropLast())] = cells[2]
        }
        return out
    }

    /// `--print-config` of a config that sets only what is required: key → printed value.
    static func printedDefaults() throws -> [String: String] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pb-decl-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("pushbridge.yaml").path
        try "kafka:\n  brokers: [k1:9092]\n  topics: [events]\nmappings: [m]\n".write(toFile: path, atomically: true, encoding: .utf8)
        let printed = try PushbridgeConfig.load(file: path, environment: [:]).printed
        var out: [String: String] = [:]
        var sections: [String] = []
        for line in printed.split(separator: "\n") {
            let depth = line.prefix { $0 == " " }.count / 2
            let body = line.drop { $0 == " " }
            guard let colon = body.firstIndex(of: ":") else { continue }
            let name = String(body[..<colon])
            let value = body[body.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            sections = Array(sections.prefix(depth))
            let key = (sections + [name]).joined(separator: ".")
            if value.isEmpty { sections.append(name) } else if !key.hasPrefix("kafka.properties.") { out[key] = value }
        }
        return out
    }

    @Test("the JSON Schema, the docs table and --print-config name exactly the declared keys")
    func sameKeys() throws {
        let schema = Set(try Self.schemaKeys().keys)
        let docs = Set(try Self.documentedDefaults().keys)
        let printed = Set(try Self.printedDefaults().keys)
        #expect(
            schema == Self.declared,
            "schemas/config.schema.json lacks \(Self.declared.subtracting(schema).sorted()), has undeclared \(schema.subtracting(Self.declared).sorted())"
        )
        #expect(
            docs == Self.declared,
            "docs/configuration.md lacks \(Self.declared.subtracting(docs).sorted()), has undeclared \(docs.subtracting(Self.declared).sorted())")
        #expect(
            printed == Self.declared,
            "--print-config lacks \(Self.declared.subtracting(printed).sorted()), prints undeclared \(printed.subtracting(Self.declared).sorted())")
    }

    @Test("the JSON Schema gives each key the declared type, minimum and values")
    func sameKinds() throws {
        let schema = try Self.schemaKeys()
        for (key, kind) in ConfigSchema.keys.sorted(by: { $0.key < $1.key }) {
            let spec = try #require(schema[key], "\(key) is not in the schema")
            let types = Set((spec["type"] as? [String]) ?? [spec["type"] as? String].compactMap { $0 })
            switch kind {
            case .string: #expect(types.contains("string"), "\(key): \(types)")
            case .stringList: #expect(types.contains("array"), "\(key): \(types)")
            case .int(let min):
                #expect(types.contains("integer"), "\(key): \(types)")
                #expect(spec["minimum"] as? Int == min, "\(key): minimum \(spec["minimum"] ?? "none"), declared \(min)")
            case .double:
                #expect(types.contains("number"), "\(key): \(types)")
                #expect(spec["exclusiveMinimum"] as? Int == 0, "\(key): the loader takes only numbers > 0")
            case .bool: #expect(types.contains("boolean"), "\(key): \(types)")
            case .oneOf(let values): #expect(Set(spec["enum"] as? [String] ?? []) == Set(values), "\(key): \(spec["enum"] ?? "no enum")")
            case .map: #expect(types.contains("object"), "\(key): \(types)")
            }
        }
    }

    /// Where the docs give a literal default (a number or `code`), it is what the loader
    /// applies; where the schema gives one, too. (A key the loader leaves unset prints `null`;
    /// the docs say what stands in then, e.g. `GOOGLE_APPLICATION_CREDENTIALS`.)
    @Test("defaults in the docs table and the JSON Schema are the ones the loader applies")
    func sameDefaults() throws {
        let printed = try Self.printedDefaults()
        let schema = try Self.schemaKeys()
        for (key, documented) in try Self.documentedDefaults().sorted(by: { $0.key < $1.key }) {
            let literal: String? =
                if Int(documented) != nil { documented } else if documented.hasPrefix("`"), documented.hasSuffix("`"), documented.count > 2 {
                    String(documented.dropFirst().dropLast())
                } else { nil }
            guard let literal, let value = printed[key], value != "null" else { continue }
            #expect(
                value.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == literal, "\(key): docs say \(literal), the loader applies \(value)")
        }
        for (key, spec) in schema.sorted(by: { $0.key < $1.key }) {
            guard let json = spec["default"], let value = printed[key] else { continue }
            // As JSON text: a boolean default is an NSNumber, which interpolates as 1 or 0.
            let data = try JSONSerialization.data(withJSONObject: json, options: [.fragmentsAllowed, .withoutEscapingSlashes])
            let expected = String(decoding: data, as: UTF8.self).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            #expect(
                value.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) == expected,
                "\(key): the schema says \(expected), the loader applies \(value)")
        }
    }
}
