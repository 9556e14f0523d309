import JSON
import RecordDecoding
import TestSupport
import Testing

/// Hostile bytes: valid encodings mutated at random (seeded, so every run is the same) must
/// never crash or hang the decoder, and every failure must be a SchemaError that says something.
@Suite struct AvroFuzzTests {
    /// Varints a length or count can be made of: huge, negative, the longest allowed, too long.
    private static let hostileVarints: [[UInt8]] = [
        [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],  // Int64.max
        [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],  // Int64.min
        [0xfe, 0xff, 0xff, 0xff, 0x0f],  // Int32.max
        [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01],  // 11 bytes
        [0x01],  // -1
        [0x7f],  // -64
    ]

    private static func mutate(_ input: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = input
        for _ in 0...random.below(3) {
            let at = random.below(bytes.count + 1)
            switch random.below(6) {
            case 0 where !bytes.isEmpty: bytes[min(at, bytes.count - 1)] ^= 1 << UInt8(random.below(8))
            case 1: bytes.removeLast(bytes.count - at)
            case 2: bytes.insert(contentsOf: (0...random.below(3)).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: at)
            case 3: bytes.removeSubrange(at..<min(bytes.count, at + 1 + random.below(4)))
            case 4: bytes.insert(contentsOf: hostileVarints[random.below(hostileVarints.count)], at: at)
            case 5 where !bytes.isEmpty: bytes[min(at, bytes.count - 1)] = [0x00, 0x01, 0x7f, 0x80, 0xff][random.below(5)]
            default: bytes.append(0x80)
            }
        }
        return bytes
    }

    @Test(.timeLimit(.minutes(1))) func mutatedRecordsFailCleanly() async throws {
        let cases: [(AvroSchema, String, JSONPathSet)] = [
            (try AvroSchema(parsing: AvroTestSchemas.complex), AvroFixtures.complex, AvroTest.keeping("/after", "/counts/b")),
            (try AvroSchema(parsing: AvroTestSchemas.complex), AvroFixtures.complexOtherBranches, AvroTest.keeping("/choice")),
            (try AvroSchema(parsing: AvroTestSchemas.primitives), AvroFixtures.primitives, AvroTest.keeping("/s")),
            (try AvroSchema(parsing: AvroTestSchemas.logical), AvroFixtures.logical, AvroTest.keeping("/id", "/day")),
            (try AvroSchema(parsing: AvroTestSchemas.logical), AvroFixtures.logicalBig, AvroTest.keeping("/price")),
            (try AvroSchema(parsing: AvroTestSchemas.linkedList), AvroFixtures.linkedList, AvroTest.keeping("/value")),
            (try AvroSchema(parsing: AvroTestSchemas.linkedList), AvroFixtures.linkedList64, AvroTest.keeping("/next/value")),
            (try AvroSchema(parsing: AvroTestSchemas.blocked), AvroFixtures.blocked, AvroTest.keeping("/last", "/scores/r")),
            (
                try AvroSchema(parsing: AvroTestSchemas.order, references: [AvroTestSchemas.money]), AvroFixtures.references,
                AvroTest.keeping("/total/currency")
            ),
        ]
        // Seconds of CPU in a debug build, so on a thread of its own (`offPool`), checked after.
        // Swift Testing runs tests on the cooperative pool, one thread per CPU (2 on CI): the
        // fuzz loops held both for close to a minute of a loaded full run, and every other
        // test's tasks and timers waited. Yielding inside the loop instead left them at the
        // back of the pool's queue past their time limits. The same in the other fuzz tests.
        let (decoded, failed, badFailures) = try await offPool {
            var random = SplitMix64(seed: 20_261_124)
            var decoded = 0
            var failed = 0
            var badFailures: [String] = []
            for _ in 0..<20_000 {
                let (schema, hex, keep) = cases[random.below(cases.count)]
                let bytes = Self.mutate(hexBytes(hex), &random)
                for paths in [JSONPathSet.all, keep] {
                    do {
                        _ = try schema.decode(bytes, from: 0, keeping: paths)
                        decoded += 1
                    } catch {
                        // A SchemaError (typed throws); it must also say something.
                        failed += 1
                        let said = String(describing: error)
                        if said.isEmpty || !said.contains(" at byte ") { badFailures.append(said) }
                    }
                }
            }
            return (decoded, failed, badFailures)
        }
        #expect(badFailures.isEmpty, "\(badFailures.prefix(5))")
        // Both outcomes happened, so the mutations reach past the first bytes and some are harmless.
        #expect(decoded > 1_000)
        #expect(failed > 10_000)
    }

    /// Counts and depths that cost little on the wire but would cost a lot to follow.
    @Test(.timeLimit(.minutes(1))) func cheapBytesThatWouldBeExpensive() throws {
        // 100 000 nested records: refused at 64, not a stack overflow.
        let list = try AvroSchema(parsing: AvroTestSchemas.linkedList)
        let deep = [UInt8](repeating: 0x02, count: 200_000) + [0x02, 0x00]
        #expect(AvroTest.failure { _ = try list.decode(deep, from: 0, keeping: .all) }?.contains("nesting deeper than 64 levels") == true)

        // 2^62 nulls in one varint: refused when built, skipped in no time when not.
        let nulls = try AvroSchema(
            parsing:
                #"{"type": "record", "name": "R", "fields": [{"name": "a", "type": {"type": "array", "items": "null"}}, {"name": "b", "type": "int"}]}"#
        )
        let huge: [UInt8] = [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x00, 0x54]
        #expect(
            AvroTest.failure { _ = try nulls.decode(huge, from: 0, keeping: .all) }
                == "field /a: more than 65536 array items of a type that takes no bytes at byte 0")
        #expect(try nulls.decode(huge, from: 0, keeping: AvroTest.keeping("/b")) == AvroTest.json(#"{"b":42}"#))
        // A few nulls are fine.
        #expect(try nulls.decode([0x06, 0x00, 0x54], from: 0, keeping: .all) == AvroTest.json(#"{"a":[null,null,null],"b":42}"#))

        // A map or an array of strings claiming 2^62 entries: refused before reserving anything.
        let map = try AvroSchema(parsing: #"{"type": "map", "values": "string"}"#)
        #expect(
            AvroTest.failure { _ = try map.decode(huge, from: 0, keeping: .all) }
                == "top level: a block of 4611686018427387904 items, more than the 2 bytes that remain at byte 0")
        let strings = try AvroSchema(parsing: #"{"type": "array", "items": "string"}"#)
        #expect(AvroTest.failure { _ = try strings.decode(huge, from: 0, keeping: .all) } != nil)
        // A string claiming 2^62 bytes.
        let string = try AvroSchema(parsing: #""bytes""#)
        #expect(
            AvroTest.failure { _ = try string.decode(huge, from: 0, keeping: .all) }
                == "top level: a bytes value of 4611686018427387904 bytes runs past the end at byte 0")
        // A negative block count whose byte size is past the end, and Int64.min as a count.
        #expect(AvroTest.failure { _ = try strings.decode([0x01, 0x7e, 0x00], from: 0, keeping: .all) } != nil)
        let minimum: [UInt8] = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00]
        #expect(
            AvroTest.failure { _ = try strings.decode(minimum, from: 0, keeping: .all) }
                == "top level: a block count of -9223372036854775808 at byte 0")
        // A decimal of a thousand bytes where precision 4 needs three at most.
        let decimal = try AvroSchema(parsing: #"{"type": "bytes", "logicalType": "decimal", "precision": 4}"#)
        let wide: [UInt8] = [0xd0, 0x0f] + [UInt8](repeating: 0x11, count: 1_000)
        #expect(AvroTest.failure { _ = try decimal.decode(wide, from: 0, keeping: .all) }?.contains("more than precision 4 can need") == true)
    }
}
