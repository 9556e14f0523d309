import JSON
import RecordDecoding
import Testing

/// Decoding every Avro type from bytes fastavro wrote (see AvroFixtures), and records whose
/// bytes do not match their schema.
@Suite struct AvroDecoderTests {
    @Test func primitives() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.primitives)
        #expect(
            try AvroTest.decode(schema, AvroFixtures.primitives)
                == AvroTest.json(#"{"n":null,"b":true,"i":-123456,"l":9007199254740993,"f":11.8,"d":-2.5e-300,"by":"AAFoaf8=","s":"héllo ✓ 🚀"}"#))
    }

    @Test func primitiveExtremes() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.primitives)
        let low = try AvroTest.decode(schema, AvroFixtures.primitivesExtremes)
        #expect(low["i"] == .int(Int64(Int32.min)))
        #expect(low["l"] == .int(.min))
        #expect(low["f"] == .string("NaN"))
        #expect(low["d"] == .string("Infinity"))
        #expect(low["by"] == .string(""))
        #expect(low["s"] == .string(""))
        #expect(low["b"] == .bool(false))
        let high = try AvroTest.decode(schema, AvroFixtures.primitivesMax)
        #expect(high["i"] == .int(Int64(Int32.max)))
        #expect(high["l"] == .int(.max))
        #expect(high["f"] == .string("-Infinity"))
        #expect(high["d"] == .string("NaN"))
        #expect(high["by"] == .string("+/8="))
    }

    /// A float is the shortest text of the 32-bit value, not the widened double's digits.
    @Test func floatPrintsShort() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.primitives)
        let value = try AvroTest.decode(schema, AvroFixtures.primitives)
        #expect(value["f"] == .double(11.8))
        #expect(value["f"] != .double(Double(Float(11.8))))
    }

    @Test func recordsEnumsFixedArraysMapsAndUnions() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.complex)
        #expect(schema.fullName == "com.acme.orders.OrderShipped")
        #expect(
            try AvroTest.decode(schema, AvroFixtures.complex)
                == AvroTest.json(
                    #"""
                    {"id":"o-1","status":"SHIPPED","hash":"3q2+7w==",
                     "items":[{"sku":"A-1","qty":2,"tags":{"color":"red"}},{"sku":"B-2","qty":-1,"tags":{}}],
                     "counts":{"a":1,"b":-2},"note":null,"previous":{"sku":"Z","qty":7,"tags":{"k":"v"}},
                     "choice":"LOST","after":42}
                    """#))
    }

    @Test func otherUnionBranches() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.complex)
        #expect(
            try AvroTest.decode(schema, AvroFixtures.complexOtherBranches)
                == AvroTest.json(
                    #"{"id":"o-2","status":"NEW","hash":"AAAAAA==","items":[],"counts":{},"note":"fragile","previous":null,"choice":[1,2,3],"after":-42}"#
                ))
        #expect(
            try AvroTest.decode(schema, AvroFixtures.complexLongChoice)
                == AvroTest.json(
                    #"{"id":"","status":"LOST","hash":"AQIDBA==","items":[],"counts":{},"note":null,"previous":null,"choice":-5,"after":0}"#))
    }

    @Test func recursiveLinkedList() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.linkedList)
        #expect(
            try AvroTest.decode(schema, AvroFixtures.linkedList)
                == AvroTest.json(#"{"value":1,"next":{"value":2,"next":{"value":3,"next":null}}}"#))
    }

    @Test func arraysAndMapsInByteSizeBlocks() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.blocked)
        #expect(
            try AvroTest.decode(schema, AvroFixtures.blocked)
                == AvroTest.json(#"{"first":"a","lists":[["x","yy"],[],["zzz"]],"scores":{"p":{"q":1},"r":{}},"last":-7}"#))
    }

    @Test func typesFromReferences() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.order, references: [AvroTestSchemas.money])
        #expect(schema.fullName == "com.acme.Order")
        #expect(
            try AvroTest.decode(schema, AvroFixtures.references)
                == AvroTest.json(#"{"total":{"units":1250,"currency":"EUR"},"lines":[{"units":1000,"currency":"EUR"}]}"#))
    }

    /// Offsets count in the whole record, so they still point at the right byte after Confluent's header.
    @Test func decodesAfterTheConfluentHeader() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.complex)
        let framed = [0, 0, 0, 0, 42] + hexBytes(AvroFixtures.complex)
        let frame = try #require(ConfluentFrame(framed))
        #expect(try schema.decode(framed, from: frame.bodyOffset, keeping: .all) == AvroTest.decode(schema, AvroFixtures.complex))
        let cut = Array(framed.prefix(5 + 31))
        #expect(AvroTest.failure { _ = try schema.decode(cut, from: 5, keeping: .all) } == "field /items/1/qty: an int runs past the end at byte 36")
        #expect(AvroTest.failure { _ = try schema.decode(cut, from: 37, keeping: .all) } != nil)
    }

    // MARK: Bytes that do not match the schema

    /// Complex's bytes: 0 id, 4 status, 5 hash, 9 items, 27 "B-2", 31 its qty, 42 note.
    private func complexFailure(_ edit: (inout [UInt8]) -> Void) throws -> String? {
        let schema = try AvroSchema(parsing: AvroTestSchemas.complex)
        var bytes = hexBytes(AvroFixtures.complex)
        edit(&bytes)
        return AvroTest.failure { _ = try schema.decode(bytes, from: 0, keeping: .all) }
    }

    @Test func tooShort() throws {
        #expect(try complexFailure { $0.removeLast($0.count - 31) } == "field /items/1/qty: an int runs past the end at byte 31")
        #expect(try complexFailure { $0.removeLast() } == "field /after: an int runs past the end at byte 55")
        #expect(try complexFailure { $0 = [] } == "field /id: a length runs past the end at byte 0")
    }

    @Test func bytesLeftOver() throws {
        #expect(try complexFailure { $0.append(0) } == "top level: 1 byte left over after the value at byte 56")
        #expect(try complexFailure { $0 += [1, 2] } == "top level: 2 bytes left over after the value at byte 56")
    }

    @Test func badUnionIndex() throws {
        #expect(try complexFailure { $0[42] = 4 } == "field /note: union branch index 2 out of range (2 branches) at byte 42")
        #expect(try complexFailure { $0[42] = 1 } == "field /note: union branch index -1 out of range (2 branches) at byte 42")
    }

    @Test func badUTF8() throws {
        #expect(try complexFailure { $0[1] = 0xff } == "field /id: a string that is not valid UTF-8 at byte 0")
        // A map key too, named by the path of its map.
        #expect(try complexFailure { $0[17] = 0xc3 } == "field /items/0/tags: a map key that is not valid UTF-8 at byte 16")
    }

    /// Hand-made: what a real client cannot write. Each is a string's length, then its bytes.
    @Test(arguments: [
        ("04c080", false),  // overlong NUL
        ("06eda080", false),  // a UTF-16 surrogate
        ("08f4908080", false),  // above U+10FFFF
        ("04e29c", false),  // cut inside a character
        ("0280", false),  // a continuation byte alone
        ("02ff", false),
        ("08f09f9a80", true),  // 🚀
        ("06efbfbf", true),  // U+FFFF
        ("08f48fbfbf", true),  // U+10FFFF
        ("04c2a0", true),
    ])
    func utf8Validation(hex: String, valid: Bool) throws {
        let schema = try AvroSchema(parsing: #""string""#)
        let failure = AvroTest.failure { _ = try AvroTest.decode(schema, hex) }
        #expect(failure == (valid ? nil : "top level: a string that is not valid UTF-8 at byte 0"))
    }

    /// The validator agrees with the standard library's where a bad or a good character follows
    /// an ASCII run of each length, so its eight-bytes-at-a-time ASCII path hands over at the
    /// right byte.
    @Test func utf8ValidationAfterASCIIRuns() throws {
        let schema = try AvroSchema(parsing: #""string""#)
        let characters: [[UInt8]] = [
            [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x9c], [0x80], [0xff], [0xf0, 0x9f, 0x9a, 0x80], [0xc2, 0xa0], [0x41],
        ]
        for run in 0...24 {
            for character in characters {
                for tail in [0, 1, 9] {
                    let text = [UInt8](repeating: 0x61, count: run) + character + [UInt8](repeating: 0x62, count: tail)
                    let decodes = (try? schema.decode([UInt8(text.count * 2)] + text, from: 0, keeping: .all)) != nil
                    #expect(decodes == (String(validating: text, as: UTF8.self) != nil), "\(run) \(character) \(tail)")
                }
            }
        }
    }

    @Test func badEnumIndex() throws {
        #expect(try complexFailure { $0[4] = 6 } == "field /status: enum index 3 out of range (3 symbols) at byte 4")
    }

    @Test func badScalars() throws {
        let primitives = try AvroSchema(parsing: AvroTestSchemas.primitives)
        var bytes = hexBytes(AvroFixtures.primitives)
        bytes[0] = 2
        #expect(
            AvroTest.failure { _ = try primitives.decode(bytes, from: 0, keeping: .all) }
                == "field /b: a boolean byte 2 that is neither 0 nor 1 at byte 0")

        let long = try AvroSchema(parsing: #""long""#)
        #expect(AvroTest.failure { _ = try AvroTest.decode(long, "ffffffffffffffffff01") } == nil)
        #expect(AvroTest.failure { _ = try AvroTest.decode(long, "ffffffffffffffffff02") } == "top level: a long beyond 64 bits at byte 0")
        #expect(AvroTest.failure { _ = try AvroTest.decode(long, "ffffffffffffffffff8101") } == "top level: a long longer than 10 bytes at byte 0")
        let int = try AvroSchema(parsing: #""int""#)
        #expect(AvroTest.failure { _ = try AvroTest.decode(int, "8080808010") } == "top level: an int of 2147483648 beyond 32 bits at byte 0")
        let string = try AvroSchema(parsing: #""string""#)
        #expect(AvroTest.failure { _ = try AvroTest.decode(string, "01") } == "top level: a string with the negative length -1 at byte 0")
        #expect(AvroTest.failure { _ = try AvroTest.decode(string, "0661") } == "top level: a string of 3 bytes runs past the end at byte 0")
        let double = try AvroSchema(parsing: #""double""#)
        #expect(AvroTest.failure { _ = try AvroTest.decode(double, "00000000000000") } == "top level: a double runs past the end at byte 0")
        #expect(AvroTest.failure { _ = try string.decode([], from: 1, keeping: .all) } != nil)
    }

    /// A block that gave its byte size must hold exactly that many bytes of items.
    @Test func blockSizeMustMatch() throws {
        let schema = try AvroSchema(parsing: AvroTestSchemas.blocked)
        var bytes = hexBytes(AvroFixtures.blocked)
        #expect(bytes[3] == 0x10)  // the first block of `lists`: count -2, then its size 8
        bytes[3] = 0x12
        #expect(
            AvroTest.failure { _ = try schema.decode(bytes, from: 0, keeping: .all) }
                == "field /lists: a block said it held 9 bytes but its items took 8 at byte 4")
    }
}
