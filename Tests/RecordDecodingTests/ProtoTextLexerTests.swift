import Testing

@testable import RecordDecoding

@Suite struct ProtoTextLexerTests {
    static func tokens(_ text: String) throws -> [ProtoTextToken] { try ProtoTextLexer.tokens(of: text) }

    @Test func kindsTextsAndPositions() throws {
        let tokens = try Self.tokens("message Foo_1 {\n\tint32 x = 0x1F; // c\n  .a.b -7 1.5 }")
        #expect(
            tokens.map(\.kind) == [
                .identifier, .identifier, .symbol, .identifier, .identifier, .symbol, .integer, .symbol, .symbol, .identifier, .symbol,
                .identifier, .symbol, .integer, .float, .symbol, .end,
            ])
        #expect(tokens.map(\.text) == ["message", "Foo_1", "{", "int32", "x", "=", "0x1F", ";", ".", "a", ".", "b", "-", "7", "1.5", "}", ""])
        let positions = tokens.map { "\($0.position.line):\($0.position.column)" }
        #expect(
            positions == [
                "1:1", "1:9", "1:15", "2:2", "2:8", "2:10", "2:12", "2:16", "3:3", "3:4", "3:5", "3:6", "3:8", "3:9", "3:11", "3:15", "3:16",
            ])
    }

    @Test(arguments: ["1.5", ".5", "5.", "1e10", "1.5E-3", "2e+2", "0.0"])
    func floats(text: String) throws {
        let tokens = try Self.tokens(text)
        #expect(tokens.map(\.kind) == [.float, .end])
        #expect(tokens[0].text == text)
    }

    @Test(arguments: [("0", 0), ("42", 42), ("0x2a", 42), ("0X2A", 42), ("052", 42), ("18446744073709551615", UInt64.max)])
    func integers(text: String, value: UInt64) throws {
        let tokens = try Self.tokens(text)
        #expect(tokens.map(\.kind) == [.integer, .end])
        #expect(ProtoTextReader.value(of: tokens[0].text) == value)
    }

    @Test func integersPast64BitsHaveNoValue() {
        #expect(ProtoTextReader.value(of: "18446744073709551616") == nil)
        #expect(ProtoTextReader.value(of: "0x10000000000000000") == nil)
    }

    @Test func stringsDecodeEscapes() throws {
        let text = #" "a\tb\n\\\"\'\?" 'it''s' "\101\x41\x4a\0" "\u00e9\U0001F600" "\a\b\f\r\v" "#
        let strings = try Self.tokens(text).filter { $0.kind == .string }.map(\.text)
        #expect(strings == ["a\tb\n\\\"'?", "it", "s", "AAJ\0", "é😀", "\u{7}\u{8}\u{C}\r\u{B}"])
    }

    @Test func quotesOfTheOtherKindAreCharacters() throws {
        let strings = try Self.tokens(#"'say "hi"' "it's""#).filter { $0.kind == .string }.map(\.text)
        #expect(strings == ["say \"hi\"", "it's"])
    }

    @Test func commentsAreSkippedAndColumnsCountCharacters() throws {
        let tokens = try Self.tokens("/* ééé */ a // ü\n/**/b/* x\n y */c")
        #expect(tokens.map(\.text) == ["a", "b", "c", ""])
        #expect(
            tokens.map(\.position) == [
                ProtoTextPosition(line: 1, column: 11), ProtoTextPosition(line: 2, column: 5), ProtoTextPosition(line: 3, column: 6),
                ProtoTextPosition(line: 3, column: 7),
            ])
    }

    @Test func aLoneSlashIsASymbol() throws {
        #expect(try Self.tokens("a / b").map(\.kind) == [.identifier, .symbol, .identifier, .end])
    }

    @Test func emptyTextIsJustTheEnd() throws {
        let tokens = try Self.tokens("  \n// only a comment")
        #expect(tokens.map(\.kind) == [.end])
        #expect(tokens[0].position == ProtoTextPosition(line: 2, column: 18))
    }

    @Test func adjacentStringsJoin() throws {
        var reader = try ProtoTextReader("\"a\" 'b' \"c\" x")
        #expect(try reader.string("a string").text == "abc")
        #expect(reader.current.text == "x")
    }
}
