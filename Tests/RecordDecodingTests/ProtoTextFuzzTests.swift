import Foundation
import TestSupport
import Testing

@testable import RecordDecoding

/// Seeded mutations of real `.proto` texts: the parser never crashes, every refusal is a
/// SchemaError that names a line and column inside the text, and every file it accepts is
/// well-formed (resolved type names, oneof indexes in range, map entries with key and value).
@Suite struct ProtoTextFuzzTests {
    /// Pieces that tend to reach the grammar's corners when dropped in at random.
    static let fragments = [
        "{", "}", ";", "=", "[", "]", "<", ">", "(", ")", ",", ".", "-", "\"", "'", "/*", "*/", "//", "\\", "\n", " ",
        "message ", "enum ", "oneof ", "map<", "map<string, ", "optional ", "required ", "repeated ", "group ", "extend ",
        "service ", "rpc ", "stream ", "reserved ", "extensions ", "to max", "option ", "packed = true", "[default = 1]",
        "syntax = \"proto2\";", "syntax = \"proto3\";", "edition = \"2023\";", "package a.b;", "import \"x.proto\";",
        "0", "1", "-1", "0x", "0x7fffffff", "2147483648", "536870912", "19000", "077", "09", "1e", "1.5", "inf",
        "int32 ", "string ", "bytes ", "Foo ", ".acme.common.Money ", "common.Money ", "G", "é", "\u{0}", "\u{7}",
        "\\u12", "\\x", "{ a: { b: 1 } }", "allow_alias = true", "= 1;", "= 0;",
    ]

    @Test func mutatedProtoTextsFailOnlyWithPlacedSchemaErrors() async throws {
        let fixtures = ProtoTextCompilerTests.fixtures
        let names = ["acme/common.proto", "acme/orders.proto", "legacy.proto", "scoping.proto"]
        let texts = try names.map { try String(contentsOf: fixtures.appendingPathComponent($0), encoding: .utf8) }
        var imports: [ProtoFile] = []
        for (name, text) in zip(names, texts) { imports.append(try ProtoTextParser.parse(text, name: name, imports: imports)) }

        // On a thread of its own, checked after (see AvroFuzzTests).
        let (accepted, refused, problems) = try await offPool { [imports] in
            var random = SplitMix64(seed: 0x5EED_2026)
            var accepted = 0
            var refused = 0
            var problems: [String] = []
            let placed = #/^line ([1-9][0-9]*):([1-9][0-9]*): ./#
            for iteration in 0..<5_000 {
                let source = random.below(texts.count)
                var bytes = Array(texts[source].utf8)
                for _ in 0...random.below(4) { Self.mutate(&bytes, &random) }
                let text = String(decoding: bytes, as: UTF8.self)
                do {
                    let file = try ProtoTextParser.parse(text, name: "fuzz.proto", imports: Array(imports[..<source]))
                    accepted += 1
                    problems += Self.wellFormedProblems(file).map { "iteration \(iteration): \($0)" }
                } catch {
                    refused += 1
                    let said = String(describing: error)
                    guard let match = said.firstMatch(of: placed) else {
                        problems.append("iteration \(iteration): not placed: \(said)")
                        continue
                    }
                    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
                    if let line = Int(match.1), line > lines {
                        problems.append("iteration \(iteration): line \(line) of \(lines): \(said)")
                    }
                }
            }
            return (accepted, refused, problems)
        }
        #expect(problems.isEmpty, "\(problems.count) problems: \(problems.prefix(5))")
        // Both outcomes must be common, or the run tested little.
        #expect(accepted > 250, "accepted \(accepted)")
        #expect(refused > 2_500, "refused \(refused)")
    }

    static func mutate(_ bytes: inout [UInt8], _ random: inout SplitMix64) {
        let at = random.below(bytes.count + 1)
        switch random.below(6) {
        case 0:  // delete a run
            let end = min(bytes.count, at + 1 + random.below(20))
            if at < end { bytes.removeSubrange(at..<end) }
        case 1, 2:  // insert a fragment
            bytes.insert(contentsOf: Array(fragments[random.below(fragments.count)].utf8), at: at)
        case 3:  // duplicate a run
            let end = min(bytes.count, at + 1 + random.below(40))
            if at < end { bytes.insert(contentsOf: Array(bytes[at..<end]), at: end) }
        case 4:  // overwrite one byte with anything
            if at < bytes.count { bytes[at] = UInt8(truncatingIfNeeded: random.next()) }
        default:  // cut the text short
            bytes.removeSubrange(at...)
        }
    }

    /// What is wrong with a file the parser accepted: type names not resolved, oneof indexes out
    /// of range, field numbers out of range, map entries without key and value.
    static func wellFormedProblems(_ file: ProtoFile) -> [String] {
        var problems: [String] = []
        var pending = file.messages
        while let message = pending.popLast() {
            pending += message.nestedMessages
            for field in message.fields {
                let named = [.message, .enum, .group].contains(field.kind)
                if named != (field.typeName?.hasPrefix(".") == true) { problems.append("type name not resolved: \(field)") }
                if !(field.oneofIndex.map { message.oneofs.indices.contains($0) } ?? true) { problems.append("oneof index out of range: \(field)") }
                if !(1...536_870_911).contains(field.number) { problems.append("field number out of range: \(field)") }
            }
            if message.isMapEntry, message.fields.map(\.name) != ["key", "value"] {
                problems.append("map entry without key and value: \(message.name)")
            }
        }
        return problems
    }
}
