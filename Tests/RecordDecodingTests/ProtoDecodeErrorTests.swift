import JSON
import Testing

@testable import RecordDecoding

/// Bad records and bad schemas: each a SchemaError that says what and where.
@Suite struct ProtoDecodeErrorTests {
    /// The error decoding `body` as OrderPlaced.Line ([0, 0]: sku 1 string, quantity 2 uint32).
    func lineError(_ body: [UInt8], keeping: JSONPathSet = .all) throws -> String {
        let schema = try ordersSchema()
        do {
            let (value, _) = try schema.decode(body, from: 0, messageIndexes: [0, 0], keeping: keeping)
            Issue.record("decoded \(value)")
            return ""
        } catch {
            return error.description
        }
    }

    @Test func truncatedAndOverlongData() throws {
        let truncatedVarint = try lineError([0x10, 0x80])
        #expect(truncatedVarint.contains("varint runs past the end"))
        #expect(truncatedVarint.contains("/quantity"))
        #expect(truncatedVarint.contains("acme.orders.OrderPlaced.Line"))
        #expect(try lineError([0x0a]).contains("runs past the end"))
        let pastEnd = try lineError([0x0a, 0x05, 0x41])
        #expect(pastEnd.contains("length of 5 runs past the end"))
        #expect(pastEnd.contains("field /sku at byte 1:"))
        #expect(try lineError([0x10] + [UInt8](repeating: 0xff, count: 10) + [0x01]).contains("longer than 10 bytes"))
        #expect(try lineError([0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]).contains("runs past the end"))
    }

    @Test func wireTypeThatDoesNotFit() throws {
        let message = try lineError([0x15, 0, 0, 0, 0])
        #expect(message.contains("field /quantity at byte 0: wire type 5 does not fit the field's type (uint32)"))
        // The same when the field is not kept: a record fails whatever the mapping reads.
        var skuOnly = JSONPathSet()
        skuOnly.insert(["sku"])
        #expect(
            try lineError([0x15, 0, 0, 0, 0], keeping: skuOnly).contains(
                "field /quantity at byte 0: wire type 5 does not fit the field's type (uint32)"))
        // A singular string is never packed.
        #expect(try lineError([0x0a, 0x01, 0x41, 0x10, 0x01, 0x0d, 0, 0, 0, 0]).contains("/sku"))
    }

    @Test func malformedTagsAndGroups() throws {
        #expect(try lineError([0x00]).contains("field number 0"))
        #expect(try lineError([0x4e, 0x00]).contains("wire type 6"))
        #expect(try lineError([0x4c]).contains("end-group tag for field 9 without its start"))
        #expect(try lineError([0x4b, 0x08, 0x01]).contains("no end-group tag"))
        #expect(try lineError([0x4b, 0x54]).contains("does not close group 9"))
        // A well-formed unknown group is skipped.
        let schema = try ordersSchema()
        let (line, _) = try schema.decode([0x4b, 0x53, 0x08, 0x01, 0x54, 0x4c, 0x10, 0x02], from: 0, messageIndexes: [0, 0])
        #expect(line["quantity"] == .int(2))
        #expect(try lineError([UInt8](repeating: 0x4b, count: 100)).contains("groups nested deeper than 64"))
    }

    @Test func invalidUTF8() throws {
        let message = try lineError([0x0a, 0x02, 0xc3, 0x28])
        #expect(message.contains("not valid UTF-8"))
        #expect(message.contains("/sku"))
        // A string no mapping reads is checked too, so the record fails alike whatever is kept.
        var quantityOnly = JSONPathSet()
        quantityOnly.insert(["quantity"])
        #expect(try lineError([0x0a, 0x02, 0xc3, 0x28], keeping: quantityOnly) == message)
        #expect(try lineError([0x0a, 0x02, 0xc3, 0x28], keeping: JSONPathSet()) == message)
    }

    @Test func badMessageIndexes() throws {
        let schema = try ordersSchema()
        for indexes in [[3], [0, 3], [1, 0, 0], [-1], [0, -1]] {
            #expect(throws: SchemaError.self, "\(indexes)") { try schema.messageName(at: indexes) }
            #expect(throws: SchemaError.self, "\(indexes)") { try schema.decode([], from: 0, messageIndexes: indexes) }
        }
        do {
            _ = try schema.messageName(at: [1, 2])
        } catch {
            #expect(error.description.contains("acme.orders.OrderShipped has 2 message(s)"))
        }
        #expect(throws: SchemaError.self) { try schema.decode([0x00], from: 2, messageIndexes: [0]) }
    }

    @Test func missingImportsAndUnknownTypes() throws {
        let orders = try #require(ProtoWireFixtures.schemas["orders-value"])
        do {
            _ = try ProtobufSchema(schema: orders)
            Issue.record("loaded without acme/common.proto")
        } catch {
            #expect(error.description.contains("imports acme/common.proto"))
        }
        let unknown = ProtoTestEncoder.file(
            "t.proto", messages: [ProtoTestEncoder.message("A", [ProtoTestEncoder.field("b", 1, type: 11, typeName: ".t.Nope")])])
        do {
            _ = try ProtobufSchema(schema: unknown)
            Issue.record("resolved .t.Nope")
        } catch {
            #expect(error.description.contains("t.A.b has type .t.Nope"))
        }
        // An enum field naming a message.
        let mismatch = ProtoTestEncoder.file(
            "t.proto", messages: [ProtoTestEncoder.message("A", [ProtoTestEncoder.field("b", 1, type: 14, typeName: ".t.A")])])
        #expect(throws: SchemaError.self) { try ProtobufSchema(schema: mismatch) }
    }

    @Test func importCycles() throws {
        let a = ProtoTestEncoder.file("a.proto", package: "a", imports: ["b.proto"], messages: [ProtoTestEncoder.message("A", [])])
        let b = ProtoTestEncoder.file("b.proto", package: "b", imports: ["a.proto"], messages: [ProtoTestEncoder.message("B", [])])
        do {
            _ = try ProtobufSchema(schema: a, references: [("b.proto", b), ("a.proto", a)])
            Issue.record("loaded a cycle")
        } catch {
            #expect(error.description.contains("import cycle: a.proto -> b.proto -> a.proto"))
        }
    }

    /// message Node { Node child = 1; string tag = 2; }, nested `levels` deep below the top.
    func nested(_ levels: Int) throws -> Result<JSONValue, SchemaError> {
        let node = ProtoTestEncoder.message(
            "Node", [ProtoTestEncoder.field("child", 1, type: 11, typeName: ".t.Node"), ProtoTestEncoder.field("tag", 2, type: 9)])
        let schema = try ProtobufSchema(schema: ProtoTestEncoder.file("t.proto", messages: [node]))
        var body: [UInt8] = [0x12, 0x01, 0x78]
        for _ in 0..<levels {
            var outer = ProtoTestEncoder()
            outer.bytes(1, body)
            body = outer.bytes
        }
        return Result { () throws(SchemaError) in try schema.decode(body, from: 0, messageIndexes: [0]).value }
    }

    @Test func nestingIsBoundedAt64() throws {
        var value = try nested(63).get()
        for _ in 0..<63 { value = try #require(value["child"]) }
        #expect(value == .object([("tag", .string("x"))]))
        #expect(throws: SchemaError.self) { try nested(64).get() }
        #expect(throws: SchemaError.self) { try nested(1000).get() }
    }

    @Test func outOfRangeTimes() throws {
        let schema = try ordersSchema()
        // WellKnown ([2]): whole_second = Timestamp{seconds: year 10000}; whole = Duration{1, -1}.
        var timestamp = ProtoTestEncoder()
        timestamp.varint(1, 253_402_300_800)
        var record = ProtoTestEncoder()
        record.bytes(1, timestamp.bytes)
        do {
            _ = try schema.decode(record.bytes, from: 0, messageIndexes: [2])
            Issue.record("decoded a Timestamp in year 10000")
        } catch {
            #expect(error.description.contains("/whole_second"))
            #expect(error.description.contains("out of range"))
        }
        var duration = ProtoTestEncoder()
        duration.varint(1, 1)
        duration.varint(2, UInt64(bitPattern: -1))
        var durationRecord = ProtoTestEncoder()
        durationRecord.bytes(7, duration.bytes)
        #expect(throws: SchemaError.self) { try schema.decode(durationRecord.bytes, from: 0, messageIndexes: [2]) }
    }

    @Test func timeText() {
        #expect(ProtoTime.timestamp(seconds: ProtoTime.minSeconds, nanos: 0) == "0001-01-01T00:00:00Z")
        #expect(ProtoTime.timestamp(seconds: ProtoTime.maxSeconds, nanos: 999_999_999) == "9999-12-31T23:59:59.999999999Z")
        #expect(ProtoTime.timestamp(seconds: 1_709_164_800, nanos: 10_000_000) == "2024-02-29T00:00:00.010Z")
        #expect(ProtoTime.timestamp(seconds: 0, nanos: -1) == nil)
        #expect(ProtoTime.timestamp(seconds: ProtoTime.maxSeconds + 1, nanos: 0) == nil)
        #expect(ProtoTime.duration(seconds: 0, nanos: 0) == "0s")
        #expect(ProtoTime.duration(seconds: -1, nanos: 0) == "-1s")
        #expect(ProtoTime.duration(seconds: 0, nanos: 1000) == "0.000001s")
        #expect(ProtoTime.duration(seconds: 1, nanos: -1) == nil)
        #expect(ProtoTime.duration(seconds: ProtoTime.maxDurationSeconds + 1, nanos: 0) == nil)
    }
}
