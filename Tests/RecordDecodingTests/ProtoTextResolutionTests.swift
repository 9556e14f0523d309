import Testing

@testable import RecordDecoding

/// Type names resolve by protobuf's scoping rules to full names with a leading dot.
@Suite struct ProtoTextResolutionTests {
    static let common = ProtoFile(
        name: "acme/common.proto", package: "acme.common",
        messages: [ProtoMessage(name: "Money", nestedEnums: [ProtoEnum(name: "Rounding", values: [("DOWN", 0)])])],
        enums: [ProtoEnum(name: "Currency", values: [("EUR", 0)])])

    static func fields(_ text: String, imports: [ProtoFile] = [], in path: String...) throws -> [ProtoField] {
        var messages = try ProtoTextParser.parse("syntax = \"proto3\";\n" + text, name: "t.proto", imports: imports).messages
        var fields: [ProtoField] = []
        for name in path {
            let message = try #require(messages.first { $0.name == name })
            fields = message.fields
            messages = message.nestedMessages
        }
        return fields
    }

    static func error(_ text: String, imports: [ProtoFile] = []) -> String? {
        do {
            _ = try ProtoTextParser.parse("syntax = \"proto3\";\n" + text, name: "t.proto", imports: imports)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func innermostScopeWins() throws {
        let fields = try Self.fields(
            """
            package p;
            message T {}
            message Outer {
              message T {}
              message Inner { T near = 1; .p.T far = 2; Outer.T named = 3; p.T qualified = 4; }
            }
            """, in: "Outer", "Inner")
        #expect(fields.map(\.typeName) == [".p.Outer.T", ".p.T", ".p.Outer.T", ".p.T"])
        #expect(fields.allSatisfy { $0.kind == .message })
    }

    @Test func laterDeclarationsAndSelfReferencesResolve() throws {
        let fields = try Self.fields("message A { B b = 1; A a = 2; } message B {}", in: "A")
        #expect(fields.map(\.typeName) == [".B", ".A"])
    }

    @Test func enumsGetKindEnum() throws {
        let fields = try Self.fields(
            "package p; enum E { Z = 0; } message M { enum F { Y = 0; } E e = 1; F f = 2; repeated M m = 3; }", in: "M")
        #expect(fields.map(\.kind) == [.enum, .enum, .message])
        #expect(fields.map(\.typeName) == [".p.E", ".p.M.F", ".p.M"])
    }

    @Test func importedTypesResolveByPackageRelativeAndFullNames() throws {
        let fields = try Self.fields(
            """
            package acme.orders;
            message Order {
              common.Money total = 1;
              acme.common.Currency currency = 2;
              .acme.common.Money.Rounding rounding = 3;
              common.Money.Rounding rounding2 = 4;
            }
            """, imports: [Self.common], in: "Order")
        #expect(
            fields.map(\.typeName) == [".acme.common.Money", ".acme.common.Currency", ".acme.common.Money.Rounding", ".acme.common.Money.Rounding"])
        #expect(fields.map(\.kind) == [.message, .enum, .enum, .enum])
    }

    @Test func fieldsAndEnumValuesDoNotHideTypes() throws {
        let fields = try Self.fields(
            "package p; message X {} message M { enum E { X = 0; } int32 Foo = 1; X x = 2; }", in: "M")
        #expect(fields[1].typeName == ".p.X")
    }

    @Test func aDottedNameStopsAtTheFirstScopeWithItsFirstPart() {
        let text = """
            package a;
            message Foo { message Bar {} }
            message M {
              message Foo {}
              Foo.Bar x = 1;
            }
            """
        #expect(
            Self.error(text)
                == "line 6:3: `Foo.Bar` resolves to `a.M.Foo.Bar`, which is not defined: the innermost scope that has `Foo` is the one searched "
                + "(a leading `.` makes a name absolute)")
    }

    @Test func unknownTypesAreErrorsAtTheirPlace() {
        #expect(
            Self.error("message M {\n  Missing m = 1;\n}")
                == "line 3:3: unknown type `Missing`: no message or enum of that name is in scope or in the imports")
        #expect(Self.error("message M { common.Money m = 1; }")?.hasPrefix("line 2:13: unknown type `common.Money`") == true)
        #expect(Self.error("message M { .M.Nope m = 1; }")?.hasPrefix("line 2:13: unknown type `.M.Nope`") == true)
    }

    @Test func packagesAndServicesAreNoTypes() {
        #expect(
            Self.error("message M { acme.common m = 1; }", imports: [Self.common])
                == "line 2:13: `acme.common` is the package `acme.common`, not a message or enum")
        #expect(Self.error("service S {} message M { .S m = 1; }") == "line 2:26: `.S` is the service `S`, not a message or enum")
    }

    @Test func duplicateDefinitionsAreErrors() {
        #expect(
            Self.error("message A {}\nenum A { Z = 0; }")
                == "line 3:6: `A` is defined twice: this enum clashes with the message `A` at line 2:9")
        #expect(
            Self.error("package acme.common; message Money {}", imports: [Self.common])
                == "line 2:30: `acme.common.Money` is defined twice: this message clashes with the message `acme.common.Money` of imported file `acme/common.proto`"
        )
        #expect(
            Self.error("message M { message E {} map<string, int32> e = 1; message EEntry {} }")
                == "line 2:60: `M.EEntry` is defined twice: this message clashes with the message `M.EEntry` at line 2:45")
        #expect(
            Self.error("package a.b; message M {}", imports: [ProtoFile(name: "x.proto", messages: [ProtoMessage(name: "a")])])?
                .hasPrefix("line 2:9: package `a.b` clashes with the message `a` of imported file `x.proto`") == true)
    }

    @Test func packedOnlyOnRepeatedPackableFields() {
        #expect(Self.error("message M { repeated string s = 1 [packed = true]; }")?.hasPrefix("line 2:36: `packed` applies only") == true)
        #expect(Self.error("message M { int32 s = 1 [packed = true]; }")?.hasPrefix("line 2:26: `packed` applies only") == true)
        #expect(Self.error("message M { repeated M s = 1 [packed = false]; }")?.hasPrefix("line 2:31: `packed` applies only") == true)
        #expect(Self.error("message M { map<int32, int32> s = 1 [packed = true]; }")?.hasPrefix("line 2:38: `packed` applies only") == true)
    }

    @Test func lookupDirectly() throws {
        let resolver = try ProtoTextResolver(file: ProtoTextFile(), name: "t.proto", imports: [Self.common])
        #expect(resolver.lookup("Money", from: "acme.common.Other") == .type("acme.common.Money", .message))
        #expect(resolver.lookup("common.Currency", from: "acme.x.Y") == .type("acme.common.Currency", .enum))
        #expect(resolver.lookup("common.Nope", from: "acme.x.Y") == .missingInScope("acme.common.Nope"))
        #expect(resolver.lookup("Money", from: "other.Y") == .unknown)
        #expect(resolver.lookup("acme", from: "") == .unknown)
        #expect(resolver.lookup(".acme", from: "") == .notAType("acme", .package))
    }
}
