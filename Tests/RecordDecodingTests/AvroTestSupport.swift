import JSON
import RecordDecoding

/// Helpers shared by the Avro tests (one namespace, so other Schemas tests cannot collide).
enum AvroTest {
    static func json(_ text: String) throws -> JSONValue { try JSONParser.parse(text) }

    /// The path set the mapping core would build from these JSON Pointers.
    static func keeping(_ pointers: String...) -> JSONPathSet {
        var set = JSONPathSet()
        for pointer in pointers { set.insert(JSONPointer(pointer)?.tokens ?? []) }
        return set
    }

    static func decode(_ schema: AvroSchema, _ hex: String, keeping: JSONPathSet = .all) throws(SchemaError) -> JSONValue {
        try schema.decode(hexBytes(hex), from: 0, keeping: keeping)
    }

    /// The description of the SchemaError `body` throws, or nil when it succeeds. (Untyped, so
    /// that closures need no annotation; the APIs under test throw only SchemaError.)
    static func failure(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as SchemaError {
            return error.description
        } catch {
            return "not a SchemaError: \(error)"
        }
    }
}

/// The schemas of Fixtures/avro/make_avro_fixtures.py, which wrote the fixture bytes with them.
enum AvroTestSchemas {
    static let primitives = #"""
        {"type": "record", "name": "Primitives", "namespace": "com.acme", "fields": [
          {"name": "n", "type": "null"}, {"name": "b", "type": "boolean"}, {"name": "i", "type": "int"},
          {"name": "l", "type": "long"}, {"name": "f", "type": "float"}, {"name": "d", "type": "double"},
          {"name": "by", "type": "bytes"}, {"name": "s", "type": "string"}]}
        """#

    static let complex = #"""
        {"type": "record", "name": "OrderShipped", "namespace": "com.acme.orders", "fields": [
          {"name": "id", "type": "string"},
          {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "SHIPPED", "LOST"]}},
          {"name": "hash", "type": {"type": "fixed", "name": "Hash", "size": 4}},
          {"name": "items", "type": {"type": "array", "items": {
            "type": "record", "name": "Item", "namespace": "com.acme.catalog", "fields": [
              {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"},
              {"name": "tags", "type": {"type": "map", "values": "string"}}]}}},
          {"name": "counts", "type": {"type": "map", "values": "long"}},
          {"name": "note", "type": ["null", "string"]},
          {"name": "previous", "type": ["null", "com.acme.catalog.Item"]},
          {"name": "choice", "type": ["null", "long", "string", "Status", {"type": "array", "items": "int"}]},
          {"name": "after", "type": "int"}]}
        """#

    static let linkedList = #"""
        {"type": "record", "name": "Node", "namespace": "list", "fields": [
          {"name": "value", "type": "long"}, {"name": "next", "type": ["null", "Node"]}]}
        """#

    static let logical = #"""
        {"type": "record", "name": "Logical", "fields": [
          {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 2}},
          {"name": "whole", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10}},
          {"name": "fixedPrice", "type": {"type": "fixed", "name": "Money", "size": 8, "logicalType": "decimal", "precision": 18, "scale": 3}},
          {"name": "tsMillis", "type": {"type": "long", "logicalType": "timestamp-millis"}},
          {"name": "tsMicros", "type": {"type": "long", "logicalType": "timestamp-micros"}},
          {"name": "localMillis", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
          {"name": "localMicros", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
          {"name": "day", "type": {"type": "int", "logicalType": "date"}},
          {"name": "tMillis", "type": {"type": "int", "logicalType": "time-millis"}},
          {"name": "tMicros", "type": {"type": "long", "logicalType": "time-micros"}},
          {"name": "id", "type": {"type": "string", "logicalType": "uuid"}}]}
        """#

    static let blocked = #"""
        {"type": "record", "name": "Blocked", "fields": [
          {"name": "first", "type": "string"},
          {"name": "lists", "type": {"type": "array", "items": {"type": "array", "items": "string"}}},
          {"name": "scores", "type": {"type": "map", "values": {"type": "map", "values": "long"}}},
          {"name": "last", "type": "long"}]}
        """#

    /// A Confluent schema reference: its own subject, used by `order` by full name.
    static let money = #"""
        {"type": "record", "name": "Money", "namespace": "com.acme.common", "fields": [
          {"name": "units", "type": "long"}, {"name": "currency", "type": "string"}]}
        """#

    static let order = #"""
        {"type": "record", "name": "Order", "namespace": "com.acme", "fields": [
          {"name": "total", "type": "com.acme.common.Money"},
          {"name": "lines", "type": {"type": "array", "items": "com.acme.common.Money"}}]}
        """#
}

/// The fixture bytes, written by Fixtures/avro/make_avro_fixtures.py (fastavro's
/// schemaless_writer; `blocked` frames fastavro's item encodings in byte-size blocks).
enum AvroFixtures {
    static let primitives = "01ff880f8280808080808020cdcc3c412f30b7b3a7c9ba810a00016869ff1e68c3a96c6c6f20e29c9320f09f9a80"
    static let primitivesExtremes = "00ffffffff0fffffffffffffffffff010000c07f000000000000f07f0000"
    static let primitivesMax = "01feffffff0ffeffffffffffffffff01000080ff000000000000f87f04fbff0278"
    static let complex = "066f2d3102deadbeef0406412d3104020a636f6c6f72067265640006422d3201000004026102026203000002025a0e02026b027600060454"
    static let complexOtherBranches = "066f2d3200000000000000020e66726167696c650008060204060053"
    static let complexLongChoice = "00040102030400000000020900"
    static let linkedList = "020204020600"
    static let logical =
        "04049c04049cffffffffffffffcef698a0cec16880e1c2abcbc0b006f698a0cec16880e1c2abcbc0b006dac402f6e8ce2080e1e3e7fe01"
        + "4836663163326133652d386234642d346532662d396131622d306332643365346635613662"
    static let logicalNegative =
        "02fb0afdabf41c0101b69b4ba630f34ed7edf3d5690101ffffddf2dfffdfdc010100feffbadd8305"
        + "4830303030303030302d303030302d303030302d303030302d303030303030303030303030"
    static let logicalBig =
        "20a31f165a9fea013a55205cd751c67eeb0200f21f494c589c00010000feeffea1fa9d730000feefb25200"
        + "4846464646464646462d464646462d464646462d464646462d464646464646464646464646"
    static let blocked = "026103100402780479790000010c02067a7a7a0000010e027002027102000106027200000d"
    static let references = "c4130645555202d00f0645555200"
}
