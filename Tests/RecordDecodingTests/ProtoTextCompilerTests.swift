import Foundation
import JSON
import Testing

@testable import RecordDecoding

/// The parser against the real compiler: `Fixtures/ProtoText/make_expected.py` ran protoc (from
/// PyPI's grpcio-tools) over the `.proto` files beside it and wrote what it made, in our model's
/// shape, to `expected.json`. Each file here must come out the same.
@Suite struct ProtoTextCompilerTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/ProtoText")

    struct FixtureError: Error, CustomStringConvertible {
        var description: String
    }

    /// The expected files, in dependency order.
    static func expectedFiles() throws -> [ProtoFile] {
        let text = try String(contentsOf: fixtures.appendingPathComponent("expected.json"), encoding: .utf8)
        guard case .array(let files)? = try JSONParser.parse(text)["files"] else { throw FixtureError(description: "no files") }
        return try files.map(file)
    }

    @Test func everyFixtureMatchesProtoc() throws {
        let expected = try Self.expectedFiles()
        #expect(expected.count == 4)
        var parsed: [ProtoFile] = []
        for file in expected {
            let text = try String(contentsOf: Self.fixtures.appendingPathComponent(file.name), encoding: .utf8)
            let result = try ProtoTextParser.parse(text, name: file.name, imports: parsed)
            #expect(result.name == file.name)
            #expect(result.package == file.package)
            #expect(result.syntax == file.syntax)
            #expect(result.dependencies == file.dependencies)
            #expect(result.enums == file.enums, "top-level enums of \(file.name)")
            // Message by message, so that a difference names the message it is in.
            #expect(result.messages.map(\.name) == file.messages.map(\.name), "messages of \(file.name)")
            for (mine, theirs) in zip(result.messages, file.messages) {
                #expect(mine == theirs, "\(file.name): message \(theirs.name)")
            }
            parsed.append(result)
        }
    }

    /// The fixtures use what the task lists, so the comparison above covers it; this keeps them
    /// from losing it in an edit.
    @Test func fixturesCoverTheFeatures() throws {
        let files = try Self.expectedFiles()
        let messages = files.flatMap { Self.allMessages($0.messages) }
        let fields = messages.flatMap(\.fields)
        #expect(messages.contains { $0.isMapEntry })
        #expect(fields.contains { $0.kind == .group && $0.oneofIndex != nil })
        #expect(fields.contains { $0.kind == .group && $0.label == .repeated })
        #expect(fields.contains { $0.proto3Optional && $0.kind == .message })
        #expect(fields.contains { $0.label == .required })
        #expect(fields.contains { $0.packed == true } && fields.contains { $0.packed == false })
        #expect(fields.contains { $0.kind == .enum && $0.typeName?.hasPrefix(".acme.common.") == true })
        #expect(messages.contains { $0.oneofs.contains("XX_x") })
        #expect(files.flatMap { Self.allEnums($0) }.contains { $0.values.contains { $0.number < 0 } })
    }

    static func allMessages(_ messages: [ProtoMessage]) -> [ProtoMessage] {
        messages + messages.flatMap { allMessages($0.nestedMessages) }
    }

    static func allEnums(_ file: ProtoFile) -> [ProtoEnum] {
        file.enums + allMessages(file.messages).flatMap(\.nestedEnums)
    }

    // MARK: expected.json -> model

    private static func file(_ json: JSONValue) throws -> ProtoFile {
        guard let syntax = ProtoFile.Syntax(rawValue: try string(json, "syntax")) else { throw FixtureError(description: "syntax") }
        return ProtoFile(
            name: try string(json, "name"), package: try string(json, "package"),
            dependencies: try array(json, "dependencies").map { try text($0) }, messages: try array(json, "messages").map(message),
            enums: try array(json, "enums").map(enumeration), syntax: syntax)
    }

    private static func message(_ json: JSONValue) throws -> ProtoMessage {
        ProtoMessage(
            name: try string(json, "name"), fields: try array(json, "fields").map(field),
            nestedMessages: try array(json, "nestedMessages").map(message), nestedEnums: try array(json, "nestedEnums").map(enumeration),
            oneofs: try array(json, "oneofs").map { try text($0) }, isMapEntry: try bool(json, "isMapEntry"))
    }

    private static func field(_ json: JSONValue) throws -> ProtoField {
        guard let label = ProtoField.Label(rawValue: Int(try int(json, "label"))), let kind = ProtoField.Kind(rawValue: Int(try int(json, "kind")))
        else { throw FixtureError(description: "label or kind of \(json)") }
        var packed: Bool?
        if json["packed"] != nil { packed = try bool(json, "packed") }
        return ProtoField(
            name: try string(json, "name"), number: Int32(try int(json, "number")), label: label, kind: kind,
            typeName: json["typeName"]?.stringValue, oneofIndex: try json["oneofIndex"].map { _ in Int(try int(json, "oneofIndex")) },
            proto3Optional: try bool(json, "proto3Optional"), packed: packed)
    }

    private static func enumeration(_ json: JSONValue) throws -> ProtoEnum {
        ProtoEnum(
            name: try string(json, "name"),
            values: try array(json, "values").map { (name: try string($0, "name"), number: Int32(try int($0, "number"))) })
    }

    private static func string(_ json: JSONValue, _ key: String) throws -> String {
        guard let value = json[key] else { throw FixtureError(description: "no \(key) in \(json)") }
        return try text(value)
    }

    private static func text(_ json: JSONValue) throws -> String {
        guard case .string(let s) = json else { throw FixtureError(description: "not a string: \(json)") }
        return s
    }

    private static func int(_ json: JSONValue, _ key: String) throws -> Int64 {
        guard case .int(let value)? = json[key] else { throw FixtureError(description: "no integer \(key) in \(json)") }
        return value
    }

    private static func bool(_ json: JSONValue, _ key: String) throws -> Bool {
        guard case .bool(let value)? = json[key] else { throw FixtureError(description: "no boolean \(key) in \(json)") }
        return value
    }

    private static func array(_ json: JSONValue, _ key: String) throws -> [JSONValue] {
        guard case .array(let values)? = json[key] else { throw FixtureError(description: "no array \(key) in \(json)") }
        return values
    }
}
