import JSON
import Testing

@testable import RecordDecoding

// Fixtures: ProtoWireFixtures.swift, made by ProtoFixtures/make_fixtures.py with the real
// protobuf package and confluent-kafka's ProtobufSerializer.

/// The orders schema as a consumer gets it: the registered text and its reference.
func ordersSchema() throws -> ProtobufSchema {
    let main = try #require(ProtoWireFixtures.schemas["orders-value"])
    let common = try #require(ProtoWireFixtures.schemas["acme/common.proto"])
    return try ProtobufSchema(schema: main, references: [("acme/common.proto", common)])
}

/// The serialized FileDescriptorProto registered under `subject`.
func descriptorBytes(_ subject: String) throws -> [UInt8] {
    let text = try #require(ProtoWireFixtures.schemas[subject])
    return try #require(ProtoDescriptorBase64.decode(text))
}

/// Decodes a framed record as the consumer will: frame, message indexes, then the message.
func decodeFramed(_ hex: String, _ schema: ProtobufSchema, keeping: JSONPathSet = .all) throws -> (value: JSONValue, messageName: String) {
    let bytes = hexBytes(hex)
    let frame = try #require(ConfluentFrame(bytes))
    let (indexes, body) = try ConfluentFrame.messageIndexes(bytes, from: frame.bodyOffset)
    return try schema.decode(bytes, from: body, messageIndexes: indexes, keeping: keeping)
}

/// The member names of an object, in order.
func keys(_ value: JSONValue?) -> [String] {
    guard case .object(let members)? = value else { return [] }
    return members.map(\.key)
}

@Suite struct ProtoDecoderTests {
    @Test func fullOrderScalarsAndCollections() throws {
        let (order, name) = try decodeFramed(ProtoWireFixtures.fullOrder, try ordersSchema())
        #expect(name == "acme.orders.OrderPlaced")
        #expect(order["order_id"] == .string("ord-42"))
        #expect(order["status"] == .string("PLACED"))
        #expect(
            order["lines"]
                == .array([
                    .object([("sku", .string("SKU-1")), ("quantity", .int(2)), ("price_cents", .int(-1999))]),
                    .object([("sku", .string("SKU-2")), ("quantity", .int(1)), ("price_cents", .int(500))]),
                ]))
        #expect(order["attributes"]?["channel"] == .string("web"))
        #expect(order["attributes"]?["lang"] == .string("fr"))
        #expect(order["email"] == .string("a@example.com"))
        #expect(order["phone"] == nil)
        #expect(order["coupon"] == .string(""))  // proto3 optional, set to its default: present
        #expect(order["packed_numbers"] == .array([.int(1), .int(-2), .int(300)]))
        #expect(order["unpacked_numbers"] == .array([.int(7), .int(-8)]))
        #expect(order["min_int64"] == .int(Int64.min))
        #expect(order["max_int64"] == .int(Int64.max))
        #expect(order["max_uint64"] == .bigInteger("18446744073709551615"))
        #expect(order["max_uint32"] == .int(4_294_967_295))
        #expect(order["negative"] == .int(-5))
        #expect(order["zigzag32"] == .int(-3))
        #expect(order["f32"] == .int(4_294_967_295))
        #expect(order["f64"] == .bigInteger("18446744073709551614"))
        #expect(order["sf32"] == .int(-123))
        #expect(order["sf64"] == .int(Int64.min))
        #expect(order["ratio"] == .double(11.8))
        #expect(order["amount"] == .double(1234.5678))
        #expect(order["blob"] == .string("AAH+/w=="))
        #expect(order["gift"] == .bool(true))
        #expect(order["history"] == .array([.string("PLACED"), .string("SHIPPED")]))
        #expect(order["packed_zigzag"] == .array([.int(-1), .int(1), .int(Int64(Int32.min))]))
        #expect(order["packed_doubles"] == .array([.double(0.1), .double(-2.5)]))
        #expect(order["not_a_number"] == .string("NaN"))
        #expect(order["infinity"] == .string("-Infinity"))
    }

    @Test func fullOrderMessagesAndWellKnownTypes() throws {
        let (order, _) = try decodeFramed(ProtoWireFixtures.fullOrder, try ordersSchema())
        #expect(order["placed_at"] == .string("2026-11-24T09:30:00.123Z"))
        #expect(order["ttl"] == .string("1.500s"))
        #expect(order["note"] == .string("leave at door"))
        #expect(order["points"] == .int(0))  // a set wrapper holding its default
        #expect(order["confirmed"] == .bool(false))
        #expect(order["any_value"] == .array([.double(1.5), .null]))
        #expect(order["extra"]?["vip"] == .bool(true))
        #expect(order["extra"]?["tier"] == .string("gold"))
        #expect(order["extra"]?["score"] == .double(9.5))
        #expect(order["extra"]?["tags"] == .array([.string("a"), .double(1)]))
        #expect(order["extra"]?["none"] == .null)
        // acme/common.proto is proto2: absent optional fields are missing, not defaults.
        let shipTo = order["ship_to"]
        #expect(keys(shipTo) == ["street", "country", "geo", "lines"])
        #expect(shipTo?["geo"] == .object([("lat", .double(48.8606))]))
        #expect(shipTo?["lines"] == .array([.string("Bat. A"), .string("3e")]))
        #expect(order["total"] == .object([("currency", .string("EUR")), ("cents", .int(4498))]))
        // map<int32, Line>: keys in decimal; a value's absent proto3 fields get their defaults.
        #expect(Set(keys(order["lines_by_no"])) == ["1", "2"])
        #expect(order["lines_by_no"]?["1"] == .object([("sku", .string("SKU-1")), ("quantity", .int(0)), ("price_cents", .int(0))]))
        #expect(order["lines_by_no"]?["2"] == .object([("sku", .string("")), ("quantity", .int(9)), ("price_cents", .int(0))]))
    }

    /// Everything json_format writes the same way as the shared table (strings, doubles,
    /// booleans, enums, the well-known types) must match it exactly.
    @Test func agreesWithTheProtobufPackagesJSON() throws {
        let (order, _) = try decodeFramed(ProtoWireFixtures.fullOrder, try ordersSchema())
        let oracle = try JSONParser.parse(ProtoWireFixtures.fullOrderJSON)
        for name in ["order_id", "status", "email", "coupon", "ratio", "amount", "blob", "gift", "placed_at", "ttl", "note", "confirmed"] {
            #expect(order[name] == oracle[name], "\(name)")
        }
        #expect(order["not_a_number"] == oracle["not_a_number"])
        #expect(order["infinity"] == oracle["infinity"])
        // json_format writes 64-bit integers as strings; the values must be the same.
        for name in ["min_int64", "max_int64", "max_uint64", "f64", "sf64"] {
            let ours: String? =
                switch order[name] {
                case .int(let n)?: String(n)
                case .bigInteger(let text)?: text
                default: nil
                }
            #expect(ours == oracle[name]?.stringValue, "\(name)")
        }
        let extra = try #require(order["extra"])
        for key in keys(oracle["extra"]) { #expect(extra[key] == oracle["extra"]?[key], "extra/\(key)") }
    }

    @Test func absentFieldsFollowPresence() throws {
        let (order, _) = try decodeFramed(ProtoWireFixtures.emptyOrder, try ordersSchema())
        #expect(order["order_id"] == .string(""))
        #expect(order["status"] == .string("STATUS_UNSPECIFIED"))
        #expect(order["lines"] == .array([]))
        #expect(order["attributes"] == .object([]))
        #expect(order["min_int64"] == .int(0))
        #expect(order["max_uint64"] == .int(0))
        #expect(order["ratio"] == .double(0))
        #expect(order["blob"] == .string(""))
        #expect(order["gift"] == .bool(false))
        // Oneof members, proto3 optional fields and message fields are left out.
        for missing in ["email", "phone", "coupon", "placed_at", "ttl", "note", "points", "extra", "ship_to", "total", "any_value"] {
            #expect(order[missing] == nil, "\(missing)")
        }
        // Declaration order, defaults included.
        #expect(keys(order).prefix(4) == ["order_id", "status", "lines", "attributes"])
    }

    @Test func oneofShowsOnlyItsSetMember() throws {
        let (order, _) = try decodeFramed(ProtoWireFixtures.phoneOrder, try ordersSchema())
        #expect(order["phone"] == .string("+33 6 12"))
        #expect(order["email"] == nil)
    }

    /// Two encodings one after the other: the later oneof member wins, messages merge.
    @Test func concatenatedEncodingsMerge() throws {
        let (order, _) = try decodeFramed(ProtoWireFixtures.merged, try ordersSchema())
        #expect(order["order_id"] == .string("second"))
        #expect(order["email"] == .string("b@example.com"))
        #expect(order["phone"] == nil)
        #expect(order["ship_to"] == .object([("street", .string("2 Rue B")), ("city", .string("Paris")), ("lines", .array([]))]))
        #expect(order["placed_at"] == .string("1970-01-01T00:00:01.000005Z"))
        #expect(order["history"] == .array([.string("PLACED"), .string("SHIPPED")]))
    }

    @Test func messageIndexesSelectTheMessage() throws {
        let schema = try ordersSchema()
        let (shipped, name) = try decodeFramed(ProtoWireFixtures.shipped, schema)
        #expect(name == "acme.orders.OrderShipped")
        #expect(shipped["order_id"] == .string("ord-42"))
        #expect(shipped["shipped_at"] == nil)
        #expect(shipped["parcels"] == .array([.object([("tracking", .string("TRK1"))])]))
        #expect(shipped["status"] == .string("SHIPPED"))
        #expect(shipped["flags"]?["true"] == .int(-1))
        #expect(shipped["flags"]?["false"] == .int(2))

        let (line, lineName) = try decodeFramed(ProtoWireFixtures.line, schema)
        #expect(lineName == "acme.orders.OrderPlaced.Line")
        #expect(line == .object([("sku", .string("SKU-9")), ("quantity", .int(3)), ("price_cents", .int(-1))]))

        #expect(try schema.messageName(at: [0]) == "acme.orders.OrderPlaced")
        #expect(try schema.messageName(at: []) == "acme.orders.OrderPlaced")
        #expect(try schema.messageName(at: [0, 1]) == "acme.orders.OrderPlaced.AttributesEntry")
        #expect(try schema.messageName(at: [1, 0]) == "acme.orders.OrderShipped.Parcel")
        #expect(try schema.messageName(at: [2]) == "acme.orders.WellKnown")
    }

    @Test func wellKnownTypes() throws {
        let (value, name) = try decodeFramed(ProtoWireFixtures.wellKnown, try ordersSchema())
        #expect(name == "acme.orders.WellKnown")
        let oracle = try JSONParser.parse(ProtoWireFixtures.wellKnownJSON)
        // Written as json_format writes them.
        for field in [
            "whole_second", "micros", "nanos", "before_epoch", "negative", "negative_fraction", "whole", "empty", "double_value",
            "int32_value", "uint32_value", "bytes_value", "null_value", "list", "nested",
        ] {
            #expect(value[field] == oracle[field], "\(field)")
        }
        #expect(value["whole_second"] == .string("2026-11-24T09:30:00Z"))
        #expect(value["negative_fraction"] == .string("-0.000000500s"))
        #expect(value["float_value"] == .double(0.1))
        #expect(value["uint64_value"] == .bigInteger("18446744073709551615"))
        #expect(value["absent_wrapper"] == nil)
        // Our choices where json_format differs: FieldMask paths as written; Any not unpacked.
        #expect(value["mask"] == .string("ship_to.city,total"))
        #expect(
            value["any"]
                == .object([
                    ("@type", .string("type.googleapis.com/acme.common.Money")), ("value", .string("CAIQCg==")),
                ]))
    }

    /// Map entries keep the wire's order; a repeated key takes the last value; an entry
    /// without its key or value holds the defaults.
    @Test func mapEntries() throws {
        var record = ProtoTestEncoder()
        for (key, value) in [("b", "1"), ("a", "2"), ("b", "3")] {
            var entry = ProtoTestEncoder()
            entry.string(1, key)
            entry.string(2, value)
            record.bytes(4, entry.bytes)
        }
        var valueOnly = ProtoTestEncoder()
        valueOnly.string(2, "no key")
        record.bytes(4, valueOnly.bytes)
        var keyOnly = ProtoTestEncoder()
        keyOnly.varint(1, 7)
        record.bytes(29, keyOnly.bytes)  // lines_by_no: map<int32, Line>
        let (order, _) = try ordersSchema().decode(record.bytes, from: 0, messageIndexes: [0])
        #expect(order["attributes"] == .object([("b", .string("3")), ("a", .string("2")), ("", .string("no key"))]))
        #expect(order["lines_by_no"] == .object([("7", .object([("sku", .string("")), ("quantity", .int(0)), ("price_cents", .int(0))]))]))
    }

    @Test func enumNumbersWithoutASymbolStayNumbers() throws {
        // OrderShipped.status = 9; OrderPlaced.history = [1, 7] packed.
        let (shipped, _) = try ordersSchema().decode([0x20, 0x09], from: 0, messageIndexes: [1])
        #expect(shipped["status"] == .int(9))
        let (order, _) = try ordersSchema().decode([0xf2, 0x01, 0x02, 0x01, 0x07], from: 0, messageIndexes: [0])
        #expect(order["history"] == .array([.string("PLACED"), .int(7)]))
    }

    /// Only the built-in files' messages are the well-known types: another file's message of
    /// the same name is an ordinary message.
    @Test func wellKnownOnlyFromTheirOwnFiles() throws {
        let text = ProtoTestEncoder.file(
            "mine/timestamp.proto", package: "google.protobuf",
            messages: [ProtoTestEncoder.message("Timestamp", [ProtoTestEncoder.field("text", 1, type: 9)])])
        let (value, name) = try ProtobufSchema(schema: text).decode([0x0a, 0x01, 0x78], from: 0, messageIndexes: [0])
        #expect(name == "google.protobuf.Timestamp")
        #expect(value == .object([("text", .string("x"))]))
    }

    @Test func unknownFieldsAndGroupsAreSkipped() throws {
        let legacy = try #require(ProtoWireFixtures.schemas["legacy-value"])
        let schema = try ProtobufSchema(schema: legacy)
        let bytes = hexBytes(ProtoWireFixtures.legacy)
        // LegacyOrderV1 does not know field 2, a group holding groups: skipped to its end.
        let (v1, _) = try schema.decode(bytes, from: 6, messageIndexes: [1])
        #expect(v1 == .object([("order_id", .string("L-1")), ("after", .int(7))]))
        // LegacyOrder knows it as a group, which is not supported.
        #expect(throws: SchemaError.self) { try decodeFramed(ProtoWireFixtures.legacy, schema) }
        do {
            _ = try decodeFramed(ProtoWireFixtures.legacy, schema)
        } catch let error as SchemaError {
            #expect(error.description.contains("groups are not supported"))
            #expect(error.description.contains("/extra"))
        }
    }
}
