import JSON
import Testing

@testable import RecordDecoding

/// What the mapping core gets from a framed record: its value and the name it is typed by.
@Suite struct WriterSchemaTests {
    static let frame: [UInt8] = [0, 0, 0, 0, 9]

    @Test("a top-level Avro union (several event types on one topic) names the branch the record took")
    func unionNamesItsBranch() throws {
        let text = """
            [{"type": "record", "name": "OrderCreated", "namespace": "acme", "fields": [{"name": "id", "type": "string"}]},
             {"type": "record", "name": "OrderShipped", "namespace": "acme", "fields": [{"name": "id", "type": "string"}, {"name": "n", "type": "int"}]}]
            """
        let schema = try WriterSchema(RegisteredSchema(id: 9, kind: .avro, text: text))
        let frame = try #require(ConfluentFrame(Self.frame))
        // Branch 1 (zigzag 2), id "A" (length zigzag 2), n = 3 (zigzag 6).
        let shipped = try schema.decode(Self.frame + [2, 2, 0x41, 6], frame: frame, keeping: .all)
        #expect(shipped.recordName == "acme.OrderShipped")
        #expect(shipped.value == .object([("id", .string("A")), ("n", .int(3))]))
        let created = try schema.decode(Self.frame + [0, 2, 0x42], frame: frame, keeping: .all)
        #expect(created.recordName == "acme.OrderCreated")
        // ["null", record]: a null record has no name (and no type: the mapping core says so).
        let optional = try WriterSchema(
            RegisteredSchema(id: 9, kind: .avro, text: #"["null", {"type": "record", "name": "Ping", "fields": []}]"#))
        #expect(try optional.decode(Self.frame + [2], frame: frame, keeping: .all).recordName == "Ping")
        #expect(try optional.decode(Self.frame + [0], frame: frame, keeping: .all).recordName == nil)
    }

    @Test("a JSON Schema record is its JSON, with no name")
    func jsonSchemaRecords() throws {
        let frame = try #require(ConfluentFrame(Self.frame))
        let decoded = try WriterSchema.json.decode(Self.frame + Array(#"{"a":1}"#.utf8), frame: frame, keeping: .all)
        #expect(decoded.value == .object([("a", .int(1))]) && decoded.recordName == nil)
        #expect(throws: SchemaError.self) { try WriterSchema.json.decode(Self.frame + Array("{".utf8), frame: frame, keeping: .all) }
    }
}
