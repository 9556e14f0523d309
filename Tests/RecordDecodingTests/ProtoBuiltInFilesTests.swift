import Foundation
import JSON
import TestSupport
import Testing

@testable import RecordDecoding

/// The imports serializers never register, held against the real files: the descriptors that
/// protobuf, googleapis-common-protos and confluent-kafka ship (`builtin_descriptors.py`, run
/// with `.tools/python`): Confluent's google/protobuf/* and confluent/* files and every
/// google/type/* file. Each must be built in with the real names, numbers, types and oneofs,
/// its messages and enums in the real order.
@Suite struct ProtoBuiltInFilesTests {
    /// Imported for options only: no type of theirs can be a field's, so they stand empty.
    static let optionsOnly: Set<String> = ["google/protobuf/descriptor.proto", "confluent/meta.proto"]

    /// Import path → the real file, read with ProtoDescriptorReader.
    static func realFiles() async throws -> [String: ProtoFile] {
        let script = Repository.root + "/Tests/TestSupport/Resources/builtin_descriptors.py"
        let (status, output) = try await ChildProcess.run(
            "/usr/bin/env", ["PYTHONPATH=\(Repository.tool("python"))", "/usr/bin/python3", "-B", script])
        try #require(status == 0, "\(output)")
        guard case .object(let members) = try JSONParser.parse(Array(output.utf8)) else { throw TestSupportError("not an object: \(output)") }
        var files: [String: ProtoFile] = [:]
        for (path, value) in members {
            let bytes = try #require(value.stringValue.flatMap(ProtoDescriptorBase64.decode), "\(path)")
            files[path] = try ProtoDescriptorReader.read(bytes)
        }
        return files
    }

    @Test func eachIsBuiltInAsTheRealFileIs() async throws {
        let real = try await Self.realFiles()
        #expect(real.keys.filter { $0.hasPrefix("google/type/") }.count >= 17, "\(real.keys.sorted())")
        for (path, file) in real.sorted(by: { $0.key < $1.key }) {
            let ours = try #require(ProtoSchemaLoader.builtIn(path), "\(path) is not built in")
            #expect(ours.name == path && ours.package == file.package, "\(path)")
            if Self.optionsOnly.contains(path) {
                #expect(ours.messages.isEmpty && ours.enums.isEmpty, "\(path)")
                continue
            }
            #expect(ours.syntax == file.syntax, "\(path)")
            #expect(ours.dependencies == file.dependencies, "\(path)")
            #expect(ours.messages.map(\.name) == file.messages.map(\.name), "\(path): the messages' order (message indexes)")
            for (mine, theirs) in zip(ours.messages, file.messages) { #expect(mine == theirs, "\(path): \(theirs.name)") }
            #expect(ours.enums == file.enums, "\(path)")
        }
    }

    /// An import that is neither built in nor a reference fails the schema, naming the import and
    /// whose it is to fix: a folder serializers take for built in (pushbridge lacks the file), or
    /// any other (the schema was registered without it).
    @Test(arguments: [
        ("google/type/weekday.proto", "serializers never register files under google/protobuf/, google/type/ or confluent/"),
        ("acme/common.proto", "the schema was registered without a reference of that name"),
    ])
    func aMissingImportIsNamed(path: String, hint: String) throws {
        let text = "syntax = \"proto3\";\nimport \"\(path)\";\nmessage M { string a = 1; }"
        let error = try #require(throws: SchemaError.self) { try ProtobufSchema(schema: text) }
        #expect(error.description.contains("schema.proto imports \(path), which is neither among the schema's references nor built in"))
        #expect(error.description.contains(hint), "\(error)")
    }

    /// A built-in file's own imports come with it: Color's alpha is a FloatValue (wrappers.proto),
    /// decoded as the wrapped value; a DateTime's offset a Duration, an Interval's ends Timestamps.
    @Test func builtInFilesBringTheirImports() throws {
        let text = """
            syntax = "proto3";
            import "google/type/color.proto";
            import "google/type/datetime.proto";
            import "google/type/interval.proto";
            message M { google.type.Color c = 1; google.type.DateTime d = 2; google.type.Interval i = 3; }
            """
        let schema = try ProtobufSchema(schema: text)
        // c {alpha {value 0.5f}}, d {year 2026, utc_offset {seconds 3600}}, i {start_time {seconds 1}}
        let bytes: [UInt8] =
            [0x0a, 0x07, 0x22, 0x05, 0x0d, 0x00, 0x00, 0x00, 0x3f, 0x12, 0x08, 0x08, 0xea, 0x0f, 0x42, 0x03, 0x08, 0x90, 0x1c]
            + [0x1a, 0x04, 0x0a, 0x02, 0x08, 0x01]
        let (value, _) = try schema.decode(bytes, from: 0, messageIndexes: [0])
        #expect(value["c"]?["alpha"] == .double(0.5))
        #expect(value["d"]?["utc_offset"] == .string("3600s") && value["d"]?["year"] == .int(2026))
        #expect(value["i"]?["start_time"] == .string("1970-01-01T00:00:01Z"))
    }
}
