import JSON
import RecordDecoding
import Testing

/// Logical types: decimals as exact text, dates and times as RFC 3339 text, UUIDs; and the
/// fallback to the underlying type. Fixture bytes: Fixtures/avro/make_avro_fixtures.py.
@Suite struct AvroLogicalTypeTests {
    @Test func everyLogicalType() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.logical)
        #expect(
            try AvroTest.decode(schema, AvroFixtures.logical)
                == AvroTest.json(
                    #"""
                    {"price":"11.80","whole":"1180","fixedPrice":"-0.050",
                     "tsMillis":"2026-11-24T09:30:00.123Z","tsMicros":"2026-11-24T09:30:00.123456Z",
                     "localMillis":"2026-11-24T09:30:00.123","localMicros":"2026-11-24T09:30:00.123456",
                     "day":"2026-11-24","tMillis":"09:30:00.123","tMicros":"09:30:00.123456",
                     "id":"6f1c2a3e-8b4d-4e2f-9a1b-0c2d3e4f5a6b"}
                    """#))
    }

    @Test func negativeAndPreEpochValues() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.logical)
        #expect(
            try AvroTest.decode(schema, AvroFixtures.logicalNegative)
                == AvroTest.json(
                    #"""
                    {"price":"-0.05","whole":"-9999999999","fixedPrice":"123456789012345.678",
                     "tsMillis":"1969-07-20T20:17:40.500Z","tsMicros":"1969-12-31T23:59:59.999999Z",
                     "localMillis":"1969-12-31T23:59:59.999","localMicros":"0001-01-01T00:00:00.000000",
                     "day":"1969-12-31","tMillis":"00:00:00.000","tMicros":"23:59:59.999999",
                     "id":"00000000-0000-0000-0000-000000000000"}
                    """#))
    }

    @Test func largeAndZeroValues() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.logical)
        #expect(
            try AvroTest.decode(schema, AvroFixtures.logicalBig)
                == AvroTest.json(
                    #"""
                    {"price":"-1234567890123456789012345678901234567.89","whole":"0","fixedPrice":"-999999999999999.999",
                     "tsMillis":"1970-01-01T00:00:00.000Z","tsMicros":"1970-01-01T00:00:00.000000Z",
                     "localMillis":"9999-12-31T23:59:59.999","localMicros":"1970-01-01T00:00:00.000000",
                     "day":"1970-01-01","tMillis":"23:59:59.999","tMicros":"00:00:00.000000",
                     "id":"FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"}
                    """#))
    }

    /// Around the byte boundaries of two's complement, where a sign byte is needed or not.
    @Test(arguments: [
        ("04049c", "11.80"), ("02fb", "-0.05"), ("0200", "0.00"), ("02ff", "-0.01"), ("027f", "1.27"),
        ("040080", "1.28"), ("04ff80", "-1.28"), ("04ff7f", "-1.29"), ("047fff", "327.67"), ("06008000", "327.68"),
        ("06ff8000", "-327.68"), ("06ff7fff", "-327.69"), ("020a", "0.10"),
        ("221d6329f1c35ca4bfabb9f560ffffffffff", "99999999999999999999999999999999999999.99"),
        ("00", "0.00"),
    ])
    func decimalScale2(hex: String, text: String) throws {
        let schema = try AvroSchema(parsing: #"{"type": "bytes", "logicalType": "decimal", "precision": 40, "scale": 2}"#)
        #expect(try AvroTest.decode(schema, hex) == .string(text))
    }

    @Test(arguments: [
        ("04049c", "1180"), ("02ff", "-1"), ("0200", "0"), ("0400ff", "255"), ("04ff00", "-256"),
        ("12010000000000000000", "18446744073709551616"), ("04ff80", "-128"), ("06ff8000", "-32768"), ("08ff800000", "-8388608"),
        // Not from fastavro, which always writes a sign byte: the shortest forms Java's
        // BigInteger.toByteArray gives, and redundant sign extension, which the specification allows.
        ("0280", "-128"), ("048000", "-32768"), ("027f", "127"), ("08000000ff", "255"), ("08ffffff00", "-256"),
    ])
    func decimalScale0(hex: String, text: String) throws {
        let schema = try AvroSchema(parsing: #"{"type": "bytes", "logicalType": "decimal", "precision": 20}"#)
        #expect(try AvroTest.decode(schema, hex) == .string(text))
    }

    /// More significant bytes than the precision can need is a record that does not match.
    @Test func decimalWiderThanItsPrecision() throws {
        let schema = try AvroSchema(parsing: #"{"type": "bytes", "logicalType": "decimal", "precision": 5}"#)
        #expect(try AvroTest.decode(schema, "0400ff") == .string("255"))
        #expect(
            AvroTest.failure { _ = try AvroTest.decode(schema, "12010000000000000000") }
                == "top level: a decimal of 9 bytes, more than precision 5 can need at byte 0")
    }

    @Test(arguments: [
        ("00", "1970-01-01T00:00:00.000Z"), ("01", "1969-12-31T23:59:59.999Z"), ("cf0f", "1969-12-31T23:59:59.000Z"),
        ("ffefb252", "1969-12-31T00:00:00.000Z"), ("d7edf3d569", "1969-07-20T20:17:40.500Z"),
        ("f698a0cec168", "2026-11-24T09:30:00.123Z"), ("feeffea1fa9d73", "9999-12-31T23:59:59.999Z"),
        ("ffdfe6a2e2a01c", "0001-01-01T00:00:00.000Z"),
    ])
    func timestampMillis(hex: String, text: String) throws {
        let schema = try AvroSchema(parsing: #"{"type": "long", "logicalType": "timestamp-millis"}"#)
        #expect(try AvroTest.decode(schema, hex) == .string(text))
    }

    @Test(arguments: [
        ("00", "1970-01-01T00:00:00.000000Z"), ("01", "1969-12-31T23:59:59.999999Z"),
        ("80e1c2abcbc0b006", "2026-11-24T09:30:00.123456Z"), ("8180def2dfffdfdc01", "0000-12-31T23:59:59.999999Z"),
    ])
    func timestampMicros(hex: String, text: String) throws {
        let schema = try AvroSchema(parsing: #"{"type": "long", "logicalType": "timestamp-micros"}"#)
        #expect(try AvroTest.decode(schema, hex) == .string(text))
    }

    /// The extremes of a long do not overflow the arithmetic; they give far-away years.
    @Test func timestampExtremes() throws {
        let schema = try AvroSchema(parsing: #"{"type": "long", "logicalType": "timestamp-micros"}"#)
        let earliest = try AvroTest.decode(schema, "ffffffffffffffffff01").stringValue
        let latest = try AvroTest.decode(schema, "feffffffffffffffff01").stringValue
        #expect(earliest == "-290308-12-21T19:59:05.224192Z")
        #expect(latest == "294247-01-10T04:00:54.775807Z")
    }

    @Test(arguments: [
        ("00", "1970-01-01"), ("01", "1969-12-31"), ("dac402", "2026-11-24"), ("cfea57", "0000-01-01"), ("c082e602", "9999-12-31"),
    ])
    func date(hex: String, text: String) throws {
        let schema = try AvroSchema(parsing: #"{"type": "int", "logicalType": "date"}"#)
        #expect(try AvroTest.decode(schema, hex) == .string(text))
    }

    @Test func timesOutsideADay() throws {
        let millis = try AvroSchema(parsing: #"{"type": "int", "logicalType": "time-millis"}"#)
        #expect(
            AvroTest.failure { _ = try AvroTest.decode(millis, "80f0b252") }
                == "top level: a time of day of 86400000 ms, not within one day at byte 0")
        #expect(AvroTest.failure { _ = try AvroTest.decode(millis, "01") } != nil)
        let micros = try AvroSchema(parsing: #"{"type": "long", "logicalType": "time-micros"}"#)
        #expect(AvroTest.failure { _ = try AvroTest.decode(micros, "8080bbdd8305") } != nil)
        #expect(AvroTest.failure { _ = try AvroTest.decode(micros, "01") } != nil)
    }

    @Test func uuidInAFixed() throws {
        let schema = try AvroSchema(parsing: #"{"type": "fixed", "name": "Id", "size": 16, "logicalType": "uuid"}"#)
        #expect(try AvroTest.decode(schema, "6f1c2a3e8b4d4e2f9a1b0c2d3e4f5a6b") == .string("6f1c2a3e-8b4d-4e2f-9a1b-0c2d3e4f5a6b"))
    }

    /// An unknown logical type, or one on a type it does not fit, reads as the underlying type.
    @Test(arguments: [
        (#"{"type": "string", "logicalType": "shoe-size"}"#, "0678797a", JSONValue.string("xyz")),
        (#"{"type": "string", "logicalType": "date"}"#, "0678797a", .string("xyz")),
        (#"{"type": "string", "logicalType": "decimal", "precision": 4}"#, "0678797a", .string("xyz")),
        (#"{"type": "int", "logicalType": "timestamp-millis"}"#, "01", .int(-1)),
        (#"{"type": "long", "logicalType": "date"}"#, "02", .int(1)),
        (#"{"type": "fixed", "name": "F", "size": 2, "logicalType": "uuid"}"#, "fbff", .string("+/8=")),
        (#"{"type": "bytes", "logicalType": 7}"#, "02fb", .string("+w==")),
    ])
    func fallsBackToTheUnderlyingType(schema text: String, hex: String, value: JSONValue) throws {
        let schema = try AvroSchema(parsing: text)
        #expect(try AvroTest.decode(schema, hex) == value)
    }
}
