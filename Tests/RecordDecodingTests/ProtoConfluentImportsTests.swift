import JSON
import Testing

@testable import RecordDecoding

/// Imports Confluent's serializers treat as known and never register as references: Confluent's
/// decimal (decoded to its exact text), its field metadata, and descriptor.proto for custom
/// options.
@Suite struct ProtoConfluentImportsTests {
    static let schema = """
        syntax = "proto3";
        package acme.billing;
        import "confluent/meta.proto";
        import "confluent/type/decimal.proto";
        import "google/protobuf/descriptor.proto";
        extend google.protobuf.FieldOptions { string pii = 50000; }
        message Invoice {
          string id = 1 [(confluent.field_meta) = { doc: "the invoice" }, (pii) = "no"];
          confluent.type.Decimal amount = 2;
        }
        """

    /// An Invoice with id "I" and `amount` as confluent-kafka 2.16's `decimal_to_protobuf`
    /// serializes it (the hex it printed for each value; see the test's comment).
    static func invoice(amountHex: String) -> [UInt8] {
        let amount = hexBytes(amountHex)
        return [0x0A, 0x01, UInt8(ascii: "I"), 0x12, UInt8(amount.count)] + amount
    }

    @Test(arguments: [
        // decimal_to_protobuf(Decimal(text), scale).SerializeToString().hex(), confluent-kafka 2.16.1
        ("0a02049c10041802", "11.80"), ("0a01fb10011802", "-0.05"),
        ("0a0e06163e665beb7ca6a2e1a64244cb10211803", "123456789012345678901234567890.123"), ("0a01001001", "0"),
    ])
    func decimalsAreExactText(hex: String, text: String) throws {
        let schema = try ProtobufSchema(schema: Self.schema)
        let (value, name) = try schema.decode(Self.invoice(amountHex: hex), from: 0, messageIndexes: [0], keeping: .all)
        #expect(name == "acme.billing.Invoice")
        #expect(value["amount"] == .string(text))
        #expect(value["id"] == .string("I"))
    }

    @Test func aNegativeScaleOrAWrongWireTypeIsAnError() throws {
        let schema = try ProtobufSchema(schema: Self.schema)
        // 1180 with scale -1 (an int32 varint of 10 bytes).
        #expect(throws: SchemaError.self) {
            try schema.decode(Self.invoice(amountHex: "0a02049c100418ffffffffffffffffff01"), from: 0, messageIndexes: [0], keeping: .all)
        }
        // The value as a varint, not bytes.
        #expect(throws: SchemaError.self) { try schema.decode(Self.invoice(amountHex: "0805"), from: 0, messageIndexes: [0], keeping: .all) }
    }
}
