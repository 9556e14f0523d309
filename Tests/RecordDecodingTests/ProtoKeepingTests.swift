import JSON
import Testing

@testable import RecordDecoding

/// `keeping:` builds only what the mappings read, and skips the rest correctly.
@Suite struct ProtoKeepingTests {
    func paths(_ pointers: [String]...) -> JSONPathSet {
        var set = JSONPathSet()
        for tokens in pointers { set.insert(tokens) }
        return set
    }

    /// Keeping one top-level field gives exactly that field of the full decode, for every field
    /// of every fixture: the skipped ones were passed over without disturbing the rest.
    @Test func eachFieldAloneMatchesTheFullDecode() throws {
        let schema = try ordersSchema()
        for record in [
            ProtoWireFixtures.fullOrder, ProtoWireFixtures.emptyOrder, ProtoWireFixtures.merged, ProtoWireFixtures.shipped,
            ProtoWireFixtures.wellKnown,
        ] {
            let (full, _) = try decodeFramed(record, schema)
            guard case .object(let members) = full else {
                Issue.record("not an object")
                continue
            }
            for member in members {
                let (kept, _) = try decodeFramed(record, schema, keeping: paths([member.key]))
                #expect(kept == .object([member]), "\(member.key)")
            }
        }
    }

    @Test func nestedPaths() throws {
        let schema = try ordersSchema()
        let record = ProtoWireFixtures.fullOrder
        #expect(
            try decodeFramed(record, schema, keeping: paths(["ship_to", "street"])).value
                == .object([("ship_to", .object([("street", .string("1 Rue de Rivoli"))]))]))
        // Two paths into one message, and a declared field the record lacks (proto2: missing).
        #expect(
            try decodeFramed(record, schema, keeping: paths(["ship_to", "geo", "lat"], ["ship_to", "city"], ["order_id"])).value
                == .object([("order_id", .string("ord-42")), ("ship_to", .object([("geo", .object([("lat", .double(48.8606))]))]))]))
        // Arrays on a kept path are kept whole.
        let (lines, _) = try decodeFramed(record, schema, keeping: paths(["lines", "0", "sku"]))
        let (full, _) = try decodeFramed(record, schema)
        #expect(lines == .object([("lines", try #require(full["lines"]))]))
        // A map keeps the keys the paths name, with what they name below.
        #expect(
            try decodeFramed(record, schema, keeping: paths(["attributes", "lang"])).value
                == .object([("attributes", .object([("lang", .string("fr"))]))]))
        #expect(
            try decodeFramed(record, schema, keeping: paths(["lines_by_no", "2", "quantity"])).value
                == .object([("lines_by_no", .object([("2", .object([("quantity", .int(9))]))]))]))
        // A well-known type is a scalar: paths below it keep it whole.
        #expect(
            try decodeFramed(record, schema, keeping: paths(["placed_at", "seconds"])).value
                == .object([("placed_at", .string("2026-11-24T09:30:00.123Z"))]))
        // Names the schema does not declare keep nothing.
        #expect(try decodeFramed(record, schema, keeping: paths(["orderId"], ["ship_to", "zip"])).value == .object([("ship_to", .object([]))]))
    }

    /// A oneof member set later clears an earlier one even when the later one is not kept.
    @Test func skippedOneofMemberStillClearsTheKeptOne() throws {
        let schema = try ordersSchema()
        #expect(try decodeFramed(ProtoWireFixtures.merged, schema, keeping: paths(["phone"])).value == .object([]))
        #expect(try decodeFramed(ProtoWireFixtures.merged, schema, keeping: paths(["email"])).value == .object([("email", .string("b@example.com"))]))
    }

    @Test func keepingNothingStillValidates() throws {
        let schema = try ordersSchema()
        #expect(try decodeFramed(ProtoWireFixtures.fullOrder, schema, keeping: JSONPathSet()).value == .object([]))
        // A truncated record fails though none of it is kept.
        let bytes = hexBytes(ProtoWireFixtures.fullOrder)
        #expect(throws: SchemaError.self) { try schema.decode(Array(bytes.dropLast(3)), from: 6, messageIndexes: [0], keeping: JSONPathSet()) }
    }
}
