import JSON
import RecordDecoding
import Testing

/// Reading schemas: the errors that name where, full names and namespaces, Confluent schema
/// references, and recursive types.
@Suite struct AvroSchemaTests {
    private func error(_ text: String, references: [String] = []) -> String? {
        AvroTest.failure { _ = try AvroSchema(parsing: text, references: references) }
    }

    @Test(arguments: [
        (
            #"{"type": "record", "name": "A", "fields": [{"name": "x", "type": "Missing"}]}"#,
            "Avro schema at A > field x: unknown type name 'Missing'"
        ),
        (#"["null", ["int", "string"]]"#, "Avro schema at union branch 1: a union inside a union"),
        (#"["null", {"type": ["int", "string"]}]"#, "Avro schema at union branch 1: a union inside a union"),
        (#"["string", "int", "string"]"#, "Avro schema at union branch 2: a second union branch of type string"),
        (
            #"["null", {"type": "array", "items": "int"}, {"type": "array", "items": "long"}]"#,
            "Avro schema at union branch 2: a second union branch of type array"
        ),
        (
            #"{"type": "record", "name": "A", "fields": [{"name": "b", "type": {"type": "record", "name": "A", "fields": []}}]}"#,
            "Avro schema at A > field b: the name A is defined twice"
        ),
        (
            #"{"type": "record", "name": "A", "fields": [{"name": "x", "type": "int"}, {"name": "x", "type": "long"}]}"#,
            "Avro schema at A: the field name x is used twice"
        ),
        (#"{"type": "fixed", "name": "F"}"#, "Avro schema at F: a fixed without a \"size\""),
        (#"{"type": "fixed", "name": "F", "size": -1}"#, "Avro schema at F: a fixed's \"size\" must be a non-negative integer, not -1"),
        (
            #"{"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": 5}"#,
            "Avro schema: a decimal's scale 5 is more than its precision 4"
        ),
        (#"{"type": "bytes", "logicalType": "decimal"}"#, "Avro schema: a decimal needs a \"precision\" that is a positive integer"),
        (#"{"type": "bytes", "logicalType": "decimal", "precision": 0}"#, "Avro schema: a decimal needs a \"precision\" that is a positive integer"),
        (
            #"{"type": "bytes", "logicalType": "decimal", "precision": 4, "scale": -1}"#,
            "Avro schema: a decimal's \"scale\" must be a non-negative integer"
        ),
        (
            #"{"type": "fixed", "name": "M", "size": 2, "logicalType": "decimal", "precision": 5}"#,
            "Avro schema at M: a decimal of precision 5 does not fit a fixed of 2 bytes (at most 4 digits)"
        ),
        (
            #"{"type": "bytes", "logicalType": "decimal", "precision": 1001}"#,
            "Avro schema: a decimal's precision 1001 is above the 1000 digits supported"
        ),
        (#"{"type": "record", "name": "1A", "fields": []}"#, "Avro schema: '1A' is not a valid Avro full name"),
        (#"{"type": "record", "name": "a..B", "fields": []}"#, "Avro schema: 'a..B' is not a valid Avro full name"),
        (#"{"type": "record", "name": "int", "fields": []}"#, "Avro schema: the primitive type name 'int' cannot name a record"),
        (#"{"type": "enum", "name": "E", "symbols": ["A", "A"]}"#, "Avro schema at E: the enum symbol A is listed twice"),
        (#"{"type": "enum", "name": "E", "symbols": ["A-1"]}"#, "Avro schema at E: the enum symbol \"A-1\" is not a valid Avro name"),
        (#"{"type": "record", "name": "R"}"#, "Avro schema at R: a record without a \"fields\" array"),
        (#"{"type": "record", "fields": []}"#, "Avro schema: a record without a \"name\""),
        (#"{"type": "array"}"#, "Avro schema: an array without \"items\""),
        (#"{"type": "map", "items": "int"}"#, "Avro schema: a map without \"values\""),
        (#"{"logicalType": "date"}"#, "Avro schema: a schema object without a \"type\""),
        (#"42"#, "Avro schema: a schema must be a type name, an object or a union array, not a JSON integer"),
        (#"{"type": "record", "name": "R", "fields": [{"name": "x"}]}"#, "Avro schema at R: the field x has no \"type\""),
    ])
    func schemaErrorsSayWhere(text: String, message: String) {
        #expect(error(text) == message)
    }

    @Test func notJSON() {
        #expect(error(#"{"type": "#)?.hasPrefix("Avro schema: the schema is not JSON: ") == true)
        #expect(error(#""string""#, references: ["{"])?.hasPrefix("Avro schema at reference 1: the schema is not JSON") == true)
    }

    @Test func nestedErrorsNameTheWholeWay() {
        let text = #"""
            {"type": "record", "name": "Order", "namespace": "com.acme", "fields": [
              {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [
                {"name": "price", "type": ["null", "Money"]}]}}}]}
            """#
        #expect(
            error(text)
                == "Avro schema at com.acme.Order > field lines > items > com.acme.Line > field price > union branch 1: unknown type name 'Money'")
    }

    @Test func fullNames() throws {
        #expect(try AvroSchema(parsing: AvroTestSchemas.complex).fullName == "com.acme.orders.OrderShipped")
        #expect(try AvroSchema(parsing: #"{"type": "record", "name": "a.b.C", "namespace": "ignored", "fields": []}"#).fullName == "a.b.C")
        #expect(try AvroSchema(parsing: #"{"type": "enum", "name": "E", "symbols": ["X"]}"#).fullName == "E")
        #expect(try AvroSchema(parsing: #"["null", "string"]"#).fullName == nil)
        #expect(try AvroSchema(parsing: #""string""#).fullName == nil)
        #expect(try AvroSchema(parsing: #"{"type": "map", "values": "string"}"#).fullName == nil)
    }

    /// Unqualified names take the namespace of the innermost enclosing named type, whether it
    /// came from a dotted name or a `namespace` attribute; references may use either form.
    @Test func namespacesAreInherited() throws {
        let text = #"""
            {"type": "record", "name": "x.y.Outer", "fields": [
              {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B"]}},
              {"name": "f", "type": "x.y.E"},
              {"name": "g", "type": "E"},
              {"name": "inner", "type": {"type": "record", "name": "Inner", "namespace": "other", "fields": [
                {"name": "h", "type": {"type": "fixed", "name": "H", "size": 1}}]}},
              {"name": "i", "type": "other.H"},
              {"name": "j", "type": "other.Inner"}]}
            """#
        let schema = try AvroSchema(parsing: text)
        #expect(schema.fullName == "x.y.Outer")
        // Bytes of hand: e=B (02), f=A (00), g=B (02), inner.h=0x41, i=0x42, j.h=0x43.
        #expect(
            try AvroTest.decode(schema, "020002414243")
                == AvroTest.json(#"{"e":"B","f":"A","g":"B","inner":{"h":"QQ=="},"i":"Qg==","j":{"h":"Qw=="}}"#))
        // H is other.H, not x.y.H.
        #expect(error(text.replacing(#""type": "other.H""#, with: #""type": "H""#)) == "Avro schema at x.y.Outer > field i: unknown type name 'H'")
    }

    /// An unqualified name not found in the enclosing namespace is looked up in the null namespace.
    @Test func nullNamespaceFallback() throws {
        let schema = try AvroSchema(
            parsing: #"{"type": "record", "name": "R", "namespace": "com.acme", "fields": [{"name": "m", "type": "Money"}]}"#,
            references: [#"{"type": "fixed", "name": "Money", "size": 2}"#])
        #expect(try AvroTest.decode(schema, "fbff") == AvroTest.json(#"{"m":"+/8="}"#))
    }

    @Test func referencesInDependencyOrder() throws {
        let currency = #"{"type": "enum", "name": "Currency", "namespace": "com.acme.common", "symbols": ["EUR", "USD"]}"#
        let money = #"""
            {"type": "record", "name": "Money", "namespace": "com.acme.common", "fields": [
              {"name": "units", "type": "long"}, {"name": "currency", "type": "Currency"}]}
            """#
        let main = #"{"type": "record", "name": "Price", "fields": [{"name": "amount", "type": "com.acme.common.Money"}]}"#
        let schema = try AvroSchema(parsing: main, references: [currency, money])
        #expect(schema.fullName == "Price")
        #expect(try AvroTest.decode(schema, "0402") == AvroTest.json(#"{"amount":{"units":2,"currency":"USD"}}"#))
        // The same reference twice (two references that share one) is read once.
        #expect(throws: Never.self) { try AvroSchema(parsing: main, references: [currency, currency, money]) }
        // Dependents before their dependencies: the name is not defined yet.
        #expect(
            error(main, references: [money, currency])
                == "Avro schema at reference 1 > com.acme.common.Money > field currency: unknown type name 'Currency'")
        // Without the references, the main schema cannot resolve its names.
        #expect(error(main) == "Avro schema at Price > field amount: unknown type name 'com.acme.common.Money'")
        // A reference cannot define a name twice either.
        #expect(error(main, references: [currency, money, money + " "])?.contains("the name com.acme.common.Money is defined twice") == true)
    }

    @Test func recursiveTypes() throws {
        let list = try AvroSchema(parsing: AvroTestSchemas.linkedList)
        #expect(list.fullName == "list.Node")
        // Mutual recursion through a type defined inside the other.
        let tree = try AvroSchema(
            parsing: #"""
                {"type": "record", "name": "A", "fields": [
                  {"name": "b", "type": ["null", {"type": "record", "name": "B", "fields": [
                    {"name": "a", "type": ["null", "A"]}, {"name": "n", "type": "int"}]}]}]}
                """#)
        #expect(try AvroTest.decode(tree, "020202000004") == AvroTest.json(#"{"b":{"a":{"b":{"a":null,"n":0}},"n":2}}"#))
    }

    /// 64 nested records decode; a 65th is refused (a recursive schema lets the bytes pick the depth).
    @Test func nestingIsLimitedTo64Levels() throws {
        let list = try AvroSchema(parsing: AvroTestSchemas.linkedList)
        let deep = try AvroTest.decode(list, AvroFixtures.linkedList64)
        var node = deep
        for expected in 1...64 {
            #expect(node["value"] == .int(Int64(expected)))
            node = node["next"] ?? .null
        }
        #expect(node == .null)
        // Node 65 starts at byte 129: 63 nodes of 2 bytes, then one of 3.
        let tooDeep = try #require(AvroTest.failure { _ = try AvroTest.decode(list, AvroFixtures.linkedList65) })
        #expect(tooDeep == "field " + String(repeating: "/next", count: 64) + ": nesting deeper than 64 levels at byte 129")
        // Skipping counts the same depth.
        let skipped = AvroTest.failure { _ = try AvroTest.decode(list, AvroFixtures.linkedList65, keeping: AvroTest.keeping("/value")) }
        #expect(skipped?.contains("nesting deeper than 64 levels") == true)
    }
}

extension AvroFixtures {
    /// Linked lists of 64 and 65 nodes, values 1… (make_avro_fixtures.py, `linkedList64`/`linkedList65`).
    static let linkedList64 =
        "02020402060208020a020c020e02100212021402160218021a021c021e02200222022402260228022a022c022e02300232023402360238023a023c023e02400242"
        + "024402460248024a024c024e02500252025402560258025a025c025e02600262026402660268026a026c026e02700272027402760278027a027c027e02800100"
    static let linkedList65 =
        "02020402060208020a020c020e02100212021402160218021a021c021e02200222022402260228022a022c022e02300232023402360238023a023c023e02400242"
        + "024402460248024a024c024e02500252025402560258025a025c025e02600262026402660268026a026c026e02700272027402760278027a027c027e0280010282"
        + "0100"
}
