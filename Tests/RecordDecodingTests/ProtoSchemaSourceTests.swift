import Foundation
import JSON
import TestSupport
import Testing

@testable import RecordDecoding

/// How schema texts are told apart and loaded: serialized descriptors, `.proto` source (through
/// ProtoTextParser, whichever state it is in), references, built-ins.
@Suite struct ProtoSchemaSourceTests {
    static let commonSource = """
        syntax = "proto2";
        package acme.common;
        enum Currency { CURRENCY_UNKNOWN = 0; EUR = 1; USD = 2; }
        message Money { optional Currency currency = 1; optional sint64 cents = 2; }
        message Address {
          message Geo { optional double lat = 1; optional double lng = 2; }
          optional string street = 1;
          optional string city = 2;
          optional string country = 3;
          optional Geo geo = 4;
          repeated string lines = 5;
        }
        """

    /// A `.proto` schema goes to the text parser: it loads when the parser reads it, and fails
    /// with the parser's own error when it does not.
    @Test func protoTextGoesToTheTextParser() throws {
        let direct = Result { () throws(SchemaError) in try ProtoTextParser.parse(Self.commonSource, name: ProtoSchemaLoader.mainName, imports: []) }
        let loaded = Result { () throws(SchemaError) in try ProtobufSchema(schema: Self.commonSource) }
        switch (direct, loaded) {
        case (.failure(let parserError), .failure(let error)):
            #expect(error.description.contains(parserError.description))
            #expect(!error.description.contains("FileDescriptorProto"))  // never read as base64
        case (.success, .success(let schema)):
            #expect(try schema.messageName(at: [1]) == "acme.common.Address")
        default:
            Issue.record("the parser gave \(direct) but the schema \(loaded)")
        }
    }

    /// A `.proto` reference of a serialized schema: it decodes as the serialized reference does.
    @Test func protoTextReference() throws {
        let orders = try #require(ProtoWireFixtures.schemas["orders-value"])
        let direct = Result { () throws(SchemaError) in try ProtoTextParser.parse(Self.commonSource, name: "acme/common.proto", imports: []) }
        let loaded = Result { () throws(SchemaError) in
            try ProtobufSchema(schema: orders, references: [("acme/common.proto", Self.commonSource)])
        }
        switch (direct, loaded) {
        case (.failure(let parserError), .failure(let error)):
            #expect(error.description.contains("acme/common.proto"))
            #expect(error.description.contains(parserError.description))
        case (.success, .success(let schema)):
            let (order, _) = try decodeFramed(ProtoWireFixtures.fullOrder, schema)
            let (expected, _) = try decodeFramed(ProtoWireFixtures.fullOrder, try ordersSchema())
            #expect(order == expected)
        default:
            Issue.record("the parser gave \(direct) but the schema \(loaded)")
        }
    }

    /// The fixtures' own `.proto` files as the registry's default text form: when the parser
    /// reads them, every fixture record decodes exactly as with the serialized descriptors.
    @Test func protoTextSchemaDecodesLikeTheDescriptors() throws {
        let folder = URL(fileURLWithPath: SchemaProducer.fixture("protobuf/acme"))
        let orders = try String(contentsOf: folder.appendingPathComponent("orders.proto"), encoding: .utf8)
        let common = try String(contentsOf: folder.appendingPathComponent("common.proto"), encoding: .utf8)
        let loaded = Result { () throws(SchemaError) in try ProtobufSchema(schema: orders, references: [("acme/common.proto", common)]) }
        let direct = Result { () throws(SchemaError) in try ProtoTextParser.parse(common, name: "acme/common.proto", imports: []) }
        switch (direct, loaded) {
        case (.failure(let parserError), .failure(let error)):
            #expect(error.description.contains(parserError.description))
        case (.success, .success(let schema)):
            let reference = try ordersSchema()
            for record in [
                ProtoWireFixtures.fullOrder, ProtoWireFixtures.emptyOrder, ProtoWireFixtures.phoneOrder, ProtoWireFixtures.merged,
                ProtoWireFixtures.shipped, ProtoWireFixtures.line, ProtoWireFixtures.wellKnown,
            ] {
                let ours = try decodeFramed(record, schema)
                let expected = try decodeFramed(record, reference)
                #expect(ours.value == expected.value)
                #expect(ours.messageName == expected.messageName)
            }
        default:
            Issue.record("the parser gave \(direct) but the schema \(loaded)")
        }
    }

    @Test func base64ThatIsNoDescriptorReportsBothReadings() {
        for text in ["QUJD", "AAAA", "Zm9v!"] {
            do {
                _ = try ProtobufSchema(schema: text)
                Issue.record("\(text) loaded")
            } catch {
                if text.hasSuffix("!") {
                    #expect(!error.description.contains("FileDescriptorProto"))
                } else {
                    #expect(error.description.contains("neither a serialized FileDescriptorProto"), "\(error.description)")
                    #expect(error.description.contains(".proto text"))
                }
            }
        }
    }

    @Test func base64WrappedOverLinesStillLoads() throws {
        let text = try #require(ProtoWireFixtures.schemas["acme/common.proto"])
        var wrapped = ""
        for (i, c) in text.enumerated() {
            if i > 0, i % 76 == 0 { wrapped += "\r\n" }
            wrapped.append(c)
        }
        let schema = try ProtobufSchema(schema: "\n" + wrapped + "\n")
        #expect(try schema.messageName(at: [1, 0]) == "acme.common.Address.Geo")
    }

    /// Built-ins win over a reference of the same path; references no import reaches are not read.
    @Test func builtInsAndUnusedReferences() throws {
        let orders = try #require(ProtoWireFixtures.schemas["orders-value"])
        let common = try #require(ProtoWireFixtures.schemas["acme/common.proto"])
        let schema = try ProtobufSchema(
            schema: orders,
            references: [("google/protobuf/timestamp.proto", "not a schema"), ("acme/common.proto", common), ("unused.proto", "{{{")])
        let (order, _) = try decodeFramed(ProtoWireFixtures.fullOrder, schema)
        #expect(order["placed_at"] == .string("2026-11-24T09:30:00.123Z"))
    }

    @Test func importScanner() {
        let text = """
            // import "commented.proto";
            syntax = "proto3";
            import "a/b.proto";
            import public 'c.proto'; /* import "block.proto"; */
            import weak "d\\"q.proto";
            message M { string import = 1; }
            option java_package = "import";
            """
        #expect(ProtoImportScanner.imports(text) == ["a/b.proto", "c.proto", "d\"q.proto"])
    }
}
