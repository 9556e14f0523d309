import Testing

@testable import RecordDecoding

/// Every refusal is a SchemaError that starts with the line and column of the cause.
@Suite struct ProtoTextErrorTests {
    static func error(_ text: String) -> String? {
        do {
            _ = try ProtoTextParser.parse(text, name: "t.proto", imports: [])
            return nil
        } catch {
            return error.description
        }
    }

    static let p3 = "syntax = \"proto3\";\n"
    static let p2 = "syntax = \"proto2\";\n"

    /// (text, the whole message expected)
    static let grammar: [(String, String)] = [
        (p3 + "message M {\n  int32 a 1;\n}", "line 3:11: expected `=` after field name `a`, found `1`"),
        (p3 + "message M { int32 a = 1 }", "line 2:25: expected `;` after field `a`, found `}`"),
        (p3 + "message M { int32 a = 1;", "line 2:25: expected `}` to close message `M`, found the end of the text"),
        (p3 + "message { }", "line 2:9: expected a message name after `message`, found `{`"),
        (p3 + "foo bar;", "line 2:1: expected `message`, `enum`, `service`, `extend`, `import`, `package` or `option`, found `foo`"),
        ("edition = \"2023\";", "line 1:1: editions (`edition = …`) are not supported; only proto2 and proto3 files are"),
        ("syntax = \"proto4\";", "line 1:10: unknown syntax \"proto4\"; expected \"proto2\" or \"proto3\""),
        ("package p;\nsyntax = \"proto3\";", "line 2:1: `syntax` must be the first statement of the file"),
        (p3 + "package a;\npackage b;", "line 3:1: a file has one `package` statement, and this is its second"),
        (p3 + "import foo;", "line 2:8: expected the imported file's path as a string, found `foo`"),
        (p2 + "message M { int32 a = 1; }", "line 2:13: expected `required`, `optional` or `repeated` before a proto2 field, found `int32`"),
        (p3 + "message M { required int32 a = 1; }", "line 2:13: proto3 has no `required` fields"),
        (p3 + "message M { oneof o { optional int32 a = 1; } }", "line 2:23: a field in a oneof takes no label (`optional`)"),
        (p3 + "message M { oneof o { } }", "line 2:19: oneof `o` has no fields; it needs at least one"),
        (p3 + "message M { repeated map<int32, int32> m = 1; }", "line 2:13: a map field takes no label"),
        (p3 + "message M { oneof o { map<int32, int32> m = 1; } }", "line 2:23: a map field cannot be in a oneof"),
        (p2 + "message M { extensions 5 to 9; } extend M { map<int32, int32> m = 5; }", "line 2:45: a map field cannot be an extension"),
        (p3 + "message M { map<float, int32> m = 1; }", "line 2:17: a map key must be an integer type, `bool` or `string`, not `float`"),
        (p3 + "message M { map<M, int32> m = 1; }", "line 2:17: a map key must be an integer type, `bool` or `string`, not `M`"),
        (p3 + "message M { map<int32 int32> m = 1; }", "line 2:23: expected `,` after the map's key type, found `int32`"),
        (p3 + "message M { optional group G = 1 {} }", "line 2:22: groups are proto2 only; proto3 has nested messages instead"),
        (p2 + "message M { optional group g = 1 {} }", "line 2:28: a group's name must start with a capital letter, and `g` does not"),
        (p3 + "message M { int32 a = 0; }", "line 2:23: 0 is out of range for the number of field `a` (1 to 536870911)"),
        (p3 + "message M { int32 a = 536870912; }", "line 2:23: 536870912 is out of range for the number of field `a` (1 to 536870911)"),
        (p3 + "message M { int32 a = -1; }", "line 2:23: expected the number of field `a`, found `-`"),
        (p3 + "message M { int32 a = 19000; }", "line 2:19: field `a` has number 19000, in 19000-19999, which protobuf keeps for itself"),
        (p3 + "message M { int32 a = 1; int32 b = 1; }", "line 2:32: field `b` has number 1, which `a` already has"),
        (p3 + "message M { int32 a = 1; string a = 2; }", "line 2:33: `a` is declared twice in message `M`"),
        (p3 + "message M { oneof a { int32 b = 1; } int32 a = 2; }", "line 2:44: `a` is declared twice in message `M`"),
        (p3 + "enum E { }", "line 2:6: enum `E` has no values; it needs at least one"),
        (p3 + "enum E { A = 1; }", "line 2:10: the first value of a proto3 enum is its default and must be 0, but `A` is 1"),
        (p3 + "enum E { A = 0; B = 0; }", "line 2:17: `B` has number 0, which `A` already has; `option allow_alias = true;` allows that"),
        (p3 + "enum E { A = 0; A = 1; }", "line 2:17: `A` is declared twice in enum `E`"),
        (p2 + "enum E { A = 2147483648; }", "line 2:14: 2147483648 is out of range for the number of enum value `A` (-2147483648 to 2147483647)"),
        (p2 + "enum E { A = -2147483649; }", "line 2:15: -2147483649 is out of range for the number of enum value `A` (-2147483648 to 2147483647)"),
        (
            p2 + "enum E { A = 99999999999999999999; }",
            "line 2:14: 99999999999999999999 is out of range for the number of enum value `A` (-2147483648 to 2147483647)"
        ),
        (
            p3 + "message M { int32 a = 1 [default = 5]; }",
            "line 2:26: proto3 fields have no `default` option: their default is always the zero value"
        ),
        (p3 + "message M { repeated int32 a = 1 [packed = 1]; }", "line 2:44: `packed` is `true` or `false`"),
        (p3 + "message M { int32 a = 1 [packed]; }", "line 2:32: expected `=` after option name `packed`, found `]`"),
        (p3 + "option (x) = { a: { b: 1 };", "line 2:14: the `{` value that starts here is never closed"),
        (p3 + "option x = ;", "line 2:12: expected an option value, found `;`"),
        (p3 + "option x = -foo;", "line 2:13: expected a number after the sign, found `foo`"),
        (p3 + "service S { rpc A (M) (M); }", "line 2:23: expected `returns` after the request type of `A`, found `(`"),
        (p3 + "service S { message M {} }", "line 2:13: expected `rpc`, `option` or `}` in service `S`, found `message`"),
        (p3 + "message M { reserved 1 to; }", "line 2:26: expected a reserved number, found `;`"),
        (p3 + "message M { x. = 1; }", "line 2:16: expected a name after `.` in `x.`, found `=`"),
        (p3 + "message M { int32 a. = 1; }", "line 2:20: expected `=` after field name `a`, found `.`"),
    ]

    static let lexical: [(String, String)] = [
        (p3 + "/* never closed\nmessage M {}", "line 2:1: the comment that starts here is never closed with `*/`"),
        (p3 + "import \"a.proto\n;", "line 2:8: the string that starts here does not end on its line"),
        (p3 + "import \"a\\q\";", "line 2:10: `\\q` is not an escape a .proto string has"),
        (p3 + "import \"a\\x\";", "line 2:10: `\\x` needs a hex digit after it"),
        (p3 + "import \"\\u12\";", "line 2:9: `\\u` needs 4 hex digits naming a Unicode code point"),
        (p3 + "import \"\\UFFFFFFFF\";", "line 2:9: `\\U` needs 8 hex digits naming a Unicode code point"),
        (p3 + "message M { int32 a = 1a; }", "line 2:24: a number must be followed by a space or a symbol, not `a`"),
        (p3 + "message M { int32 a = 09; }", "line 2:23: `09` starts with 0, so it is octal, and has a digit octal lacks"),
        (p3 + "message M { int32 a = 0x; }", "line 2:23: a hex number needs digits after `0x`"),
        (p3 + "option x = 1e;", "line 2:12: a number's exponent needs digits"),
        (p3 + "// é\nmessage Mé {}", "line 3:10: unexpected non-ASCII character outside a string or comment"),
        (p3 + "/* éé */ message \u{7}", "line 2:18: unexpected control character"),
    ]

    @Test(arguments: grammar)
    func grammarErrors(text: String, expected: String) {
        #expect(Self.error(text) == expected)
    }

    @Test(arguments: lexical)
    func lexicalErrors(text: String, expected: String) {
        #expect(Self.error(text) == expected)
    }

    @Test func nestingDeeperThan64IsRefused() {
        func nested(_ depth: Int) -> String {
            String(repeating: "message M {\n", count: depth) + String(repeating: "}\n", count: depth)
        }
        #expect(Self.error(nested(64)) == nil)
        #expect(Self.error(nested(65)) == "line 65:11: messages are nested more than 64 deep, the most this parser reads")
        // Groups are message bodies too.
        let groups = "message M { " + String(repeating: "optional group G = 1 { ", count: 64) + String(repeating: "} ", count: 65)
        #expect(Self.error(groups)?.hasSuffix("messages are nested more than 64 deep, the most this parser reads") == true)
    }

    @Test func aggregateOptionsNestDeeplyWithoutRecursion() {
        let deep = "option (x) = " + String(repeating: "{ a ", count: 10_000) + String(repeating: "} ", count: 10_000) + ";"
        #expect(Self.error(deep) == nil)
    }
}
