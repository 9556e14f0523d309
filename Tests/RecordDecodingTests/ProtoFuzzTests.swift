import ExtrasBase64
import JSON
import TestSupport
import Testing

@testable import RecordDecoding

/// Mutated encodings never crash or hang the decoder: each decodes or fails with a SchemaError
/// that says why.
@Suite struct ProtoFuzzTests {
    /// Bit flips, truncations, inserted and deleted bytes, huge lengths, stray tags.
    static func mutate(_ input: [UInt8], _ random: inout SplitMix64) -> [UInt8] {
        var bytes = input
        for _ in 0...random.below(3) {
            let at = random.below(bytes.count + 1)
            switch random.below(8) {
            case 0:
                if !bytes.isEmpty { bytes[random.below(bytes.count)] ^= 1 << UInt8(random.below(8)) }
            case 1: bytes = Array(bytes.prefix(at))
            case 2: bytes.insert(contentsOf: (0..<(1 + random.below(8))).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: at)
            case 3: if at < bytes.count { bytes.removeSubrange(at..<min(bytes.count, at + 1 + random.below(16))) }
            case 4:
                // A length-delimited tag with a length far past the end.
                var huge = ProtoTestEncoder()
                huge.tag(1 + random.below(40), 2)
                huge.varint([UInt64(1) << 31, UInt64(1) << 62, UInt64.max, UInt64(bytes.count + 1)][random.below(4)])
                bytes.insert(contentsOf: huge.bytes, at: at)
            case 5: if !bytes.isEmpty { bytes[random.below(bytes.count)] = [0x80, 0xff, 0x00, 0x4b, 0x4c, 0x07][random.below(6)] }
            case 6:
                if !bytes.isEmpty {
                    let start = random.below(bytes.count)
                    let slice = bytes[start..<min(bytes.count, start + 1 + random.below(32))]
                    bytes.insert(contentsOf: slice, at: at)
                }
            default: bytes.insert(contentsOf: [UInt8](repeating: 0x4b, count: 1 + random.below(80)), at: at)
            }
        }
        return bytes
    }

    @Test(.timeLimit(.minutes(2))) func mutatedRecords() async throws {
        let orders = try ordersSchema()
        let legacy = try ProtobufSchema(schema: try #require(ProtoWireFixtures.schemas["legacy-value"]))
        let records: [(ProtobufSchema, String, [Int])] = [
            (orders, ProtoWireFixtures.fullOrder, [0]), (orders, ProtoWireFixtures.shipped, [1]),
            (orders, ProtoWireFixtures.line, [0, 0]), (orders, ProtoWireFixtures.merged, [0]),
            (orders, ProtoWireFixtures.wellKnown, [2]), (orders, ProtoWireFixtures.phoneOrder, [0]), (legacy, ProtoWireFixtures.legacy, [1]),
        ]
        var keepSome = JSONPathSet()
        for pointer in [["order_id"], ["ship_to", "street"], ["attributes", "lang"], ["lines"], ["extra"], ["parcels"]] { keepSome.insert(pointer) }
        // On a thread of its own, checked after (see AvroFuzzTests).
        let (decoded, failed, badFailures) = try await offPool { [keepSome] in
            var random = SplitMix64(seed: 0x5EED_0001)
            var decoded = 0
            var failed = 0
            var badFailures: [String] = []
            for iteration in 0..<20_000 {
                let (schema, hex, indexes) = records[iteration % records.count]
                let framed = hexBytes(hex)
                let header = framed.prefix(try ConfluentFrame.messageIndexes(framed, from: 5).bodyOffset)
                let body = Self.mutate(Array(framed.dropFirst(header.count)), &random)
                do {
                    _ = try schema.decode(
                        Array(header) + body, from: header.count, messageIndexes: indexes, keeping: iteration % 3 == 0 ? keepSome : .all)
                    decoded += 1
                } catch {
                    failed += 1
                    let said = String(describing: error)
                    if !said.contains(" at byte ") { badFailures.append(said) }
                }
            }
            return (decoded, failed, badFailures)
        }
        // Every failure says why, and where.
        #expect(badFailures.isEmpty, "\(badFailures.prefix(5))")
        // Both outcomes happen: the mutations are neither all harmless nor all fatal.
        #expect(decoded > 1000)
        #expect(failed > 1000)
    }

    /// Mutated descriptors load or fail with a SchemaError; those that load decode a record or
    /// fail cleanly too.
    @Test(.timeLimit(.minutes(2))) func mutatedSchemas() async throws {
        let bytes = try descriptorBytes("orders-value")
        let common = try #require(ProtoWireFixtures.schemas["acme/common.proto"])
        let record = hexBytes(ProtoWireFixtures.fullOrder)
        // On a thread of its own, checked after (see AvroFuzzTests).
        let (loaded, silentFailures) = try await offPool {
            var random = SplitMix64(seed: 0x5EED_0002)
            var loaded = 0
            var silentFailures = 0
            for _ in 0..<3000 {
                let text = Base64.encodeToString(bytes: Self.mutate(bytes, &random))
                let schema: ProtobufSchema
                do {
                    schema = try ProtobufSchema(schema: text, references: [("acme/common.proto", common)])
                } catch {
                    if String(describing: error).isEmpty { silentFailures += 1 }
                    continue
                }
                loaded += 1
                do {
                    _ = try schema.decode(record, from: 6, messageIndexes: [0])
                } catch {
                    if String(describing: error).isEmpty { silentFailures += 1 }
                }
            }
            return (loaded, silentFailures)
        }
        #expect(silentFailures == 0, "failures that say nothing")
        #expect(loaded > 20)
    }
}
