import Testing

@testable import RecordDecoding

/// What the parser makes of small texts, rule by rule (the comparison with protoc itself is in
/// ProtoTextCompilerTests).
@Suite struct ProtoTextParserTests {
    static func parse(_ text: String, imports: [ProtoFile] = []) throws -> ProtoFile {
        try ProtoTextParser.parse(text, name: "test.proto", imports: imports)
    }

    static func message(_ text: String, _ path: String...) throws -> ProtoMessage {
        var messages = try parse(text).messages
        var found: ProtoMessage?
        for name in path {
            let message = try #require(messages.first { $0.name == name }, "no message \(name)")
            messages = message.nestedMessages
            found = message
        }
        return try #require(found)
    }

    @Test func syntaxPackageAndImports() throws {
        let file = try Self.parse(
            """
            syntax = "proto3";
            package  acme . orders ;
            import "a.proto";
            import public 'b.proto';
            import weak "c" "/d.proto";
            """)
        #expect(file.syntax == .proto3)
        #expect(file.package == "acme.orders")
        #expect(file.dependencies == ["a.proto", "b.proto", "c/d.proto"])
        #expect(file.name == "test.proto")
    }

    @Test func noSyntaxStatementMeansProto2() throws {
        let file = try Self.parse("message M { optional int32 a = 1; }")
        #expect(file.syntax == .proto2)
        #expect(file.package == "")
    }

    @Test func scalarsLabelsAndNumbers() throws {
        let m = try Self.message(
            """
            syntax = "proto2";
            message M {
              required sint64 a = 1;
              optional fixed32 b = 0x2;
              repeated bytes c = 03;
              optional sfixed64 d = 536870911;
            }
            """, "M")
        #expect(m.fields.map(\.name) == ["a", "b", "c", "d"])
        #expect(m.fields.map(\.number) == [1, 2, 3, 536_870_911])
        #expect(m.fields.map(\.label) == [.required, .optional, .repeated, .optional])
        #expect(m.fields.map(\.kind) == [.sint64, .fixed32, .bytes, .sfixed64])
        #expect(m.fields.allSatisfy { $0.typeName == nil && !$0.proto3Optional && $0.oneofIndex == nil })
    }

    @Test func proto3FieldsWithoutLabelAreOptionalWithoutPresence() throws {
        let m = try Self.message("syntax = \"proto3\"; message M { string a = 1; repeated uint32 b = 2; }", "M")
        #expect(m.fields.map(\.label) == [.optional, .repeated])
        #expect(m.fields.map(\.proto3Optional) == [false, false])
        #expect(m.oneofs.isEmpty)
    }

    @Test func mapFieldBecomesRepeatedEntryMessage() throws {
        let m = try Self.message(
            """
            syntax = "proto3";
            package p;
            message M {
              message V {}
              map<string, V> item_prices = 3;
              map<sint32, double> by_id = 4;
            }
            """, "M")
        #expect(m.fields[0] == ProtoField(name: "item_prices", number: 3, label: .repeated, kind: .message, typeName: ".p.M.ItemPricesEntry"))
        #expect(m.nestedMessages.map(\.name) == ["V", "ItemPricesEntry", "ByIdEntry"])
        let entry = m.nestedMessages[1]
        #expect(entry.isMapEntry)
        #expect(
            entry.fields == [
                ProtoField(name: "key", number: 1, kind: .string),
                ProtoField(name: "value", number: 2, kind: .message, typeName: ".p.M.V"),
            ])
        #expect(m.nestedMessages[2].fields.map(\.kind) == [.sint32, .double])
        #expect(!m.nestedMessages[0].isMapEntry)
    }

    @Test(arguments: [("a", "AEntry"), ("item_prices", "ItemPricesEntry"), ("fooBar", "FooBarEntry"), ("foo__bar_1x", "FooBar1xEntry")])
    func mapEntryNames(field: String, entry: String) {
        #expect(ProtoTextNames.mapEntryName(of: field) == entry)
    }

    @Test func proto3OptionalGetsSyntheticOneofAfterTheRealOnes() throws {
        let m = try Self.message(
            """
            syntax = "proto3";
            message M {
              optional int32 a = 1;
              oneof kind { string b = 2; bytes c = 3; }
              optional M self = 4;
              oneof other { bool d = 5; }
            }
            """, "M")
        #expect(m.oneofs == ["kind", "other", "_a", "_self"])
        #expect(m.fields.map(\.oneofIndex) == [2, 0, 0, 3, 1])
        #expect(m.fields.map(\.proto3Optional) == [true, false, false, true, false])
        #expect(m.fields[3].kind == .message && m.fields[3].typeName == ".M")
    }

    @Test func syntheticOneofNamesAvoidTakenNames() throws {
        let m = try Self.message(
            "syntax = \"proto3\"; message M { optional int32 _x = 1; int32 X_x = 2; optional int32 y = 3; int32 _y = 4; }", "M")
        #expect(m.oneofs == ["XX_x", "X_y"])
    }

    @Test func proto2OptionalIsNoProto3Optional() throws {
        let m = try Self.message("syntax = \"proto2\"; message M { optional int32 a = 1; }", "M")
        #expect(m.fields[0].proto3Optional == false)
        #expect(m.oneofs.isEmpty)
    }

    @Test func groupsBecomeGroupFieldsWithNestedMessages() throws {
        let m = try Self.message(
            """
            package p;
            message M {
              repeated group Item = 1 { required string name = 1; }
              oneof o { group Choice = 2 { optional int32 n = 1; } }
            }
            """, "M")
        #expect(m.fields[0] == ProtoField(name: "item", number: 1, label: .repeated, kind: .group, typeName: ".p.M.Item"))
        #expect(m.fields[1] == ProtoField(name: "choice", number: 2, label: .optional, kind: .group, typeName: ".p.M.Choice", oneofIndex: 0))
        #expect(m.nestedMessages.map(\.name) == ["Item", "Choice"])
        #expect(m.nestedMessages[0].fields == [ProtoField(name: "name", number: 1, label: .required, kind: .string)])
    }

    @Test func extendAndServicesAreLeftOutButTheirGroupsStay() throws {
        let file = try Self.parse(
            """
            message M { extensions 10 to max; }
            extend M { optional int32 plain = 10; optional group G = 11 { optional int32 x = 1; } }
            service S { rpc Call (M) returns (stream M); rpc Other (stream .M) returns (M) { option deprecated = true; } }
            message After {}
            """)
        #expect(file.messages.map(\.name) == ["M", "G", "After"])
        #expect(file.messages[0].fields.isEmpty)
    }

    @Test func enumsKeepValuesInOrder() throws {
        let file = try Self.parse(
            """
            syntax = "proto2";
            enum E { option allow_alias = true; A = 1; B = 1; C = -2147483648; D = 0x7fffffff; reserved 5, 9 to max; reserved "X"; }
            """)
        let values = file.enums[0].values
        #expect(values.map(\.name) == ["A", "B", "C", "D"])
        #expect(values.map(\.number) == [1, 1, Int32.min, Int32.max])
    }

    @Test func packedIsReadWhenWritten() throws {
        let m = try Self.message(
            """
            syntax = "proto3";
            message M {
              enum E { Z = 0; }
              repeated int32 a = 1 [packed = false];
              repeated E b = 2 [deprecated = true, packed = true];
              repeated int64 c = 3;
            }
            """, "M")
        #expect(m.fields.map(\.packed) == [false, true, nil])
        #expect(m.fields[1].kind == .enum)
    }

    @Test func optionsOfEveryShapeAreSkipped() throws {
        let m = try Self.message(
            """
            syntax = "proto2";
            option (my.file_opt) = { a: 1 b: "}" c { d: [1, 2] } e: < f: -inf > };
            option java_package = "x" 'y';
            message M {
              option (.my.msg_opt).path.(ext) = -1.5e-3;
              optional double a = 1 [default = nan, (x) = { y: true }, json_name = "A"];
              optional string b = 2 [default = "\\u00e9\\\""];
            }
            """, "M")
        #expect(m.fields.map(\.name) == ["a", "b"])
    }

    @Test func commentsAnywhere() throws {
        let m = try Self.message(
            """
            // leading
            syntax /* inline */ = "proto3"; // trailing
            message /* é ü */ M { /* multi
            line */ int32 a = 1; // done
            }
            """, "M")
        #expect(m.fields.map(\.name) == ["a"])
    }

    @Test func emptyStatementsAreAllowed() throws {
        let file = try Self.parse("syntax = \"proto3\";; message M { ; int32 a = 1;; oneof o { ; int32 b = 2; } } ; enum E { Z = 0; ; }")
        #expect(file.messages[0].fields.count == 2)
        #expect(file.enums.count == 1)
    }
}
