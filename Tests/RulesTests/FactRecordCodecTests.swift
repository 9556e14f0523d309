import Rules
import Testing

@Suite("Changelog records: one fact, or several written together")
struct FactRecordCodecTests {
    @Test("a lone fact is written as version 1, and a version 1 record reads as that one fact")
    func single() throws {
        var rng = RandomChooser(seed: 3)
        for _ in 0..<500 {
            let fact = FactGenerator.fact(&rng)
            #expect(FactCodec.encodeRecord([fact]) == FactCodec.encode(fact))
            #expect(try FactCodec.decodeRecord(FactCodec.encode(fact)) == [fact])
        }
    }

    @Test("several facts round-trip in their order, up to a record's most")
    func batches() throws {
        var rng = RandomChooser(seed: 5)
        for count in [2, 3, 17, FactCodec.maxFactsPerRecord] {
            let facts = (0..<count).map { _ in FactGenerator.fact(&rng) }
            let bytes = FactCodec.encodeRecord(facts)
            #expect(bytes.first == FactCodec.batchVersion)
            #expect(try FactCodec.decodeRecord(bytes) == facts)
        }
    }

    @Test("a batch costs its facts' bytes plus a length each, not a record each")
    func size() {
        var rng = RandomChooser(seed: 9)
        let facts = (0..<50).map { _ in FactGenerator.fact(&rng) }
        let alone = facts.map { FactCodec.encode($0).count }.reduce(0, +)
        let together = FactCodec.encodeRecord(facts).count
        #expect(together > alone && together <= alone + 2 + 50 * 2)
    }

    @Test("every truncation of a batch, and a batch with damage inside, is an error: a record is taken whole or not at all")
    func damaged() {
        var rng = RandomChooser(seed: 11)
        for _ in 0..<30 {
            let facts = (0..<(2 + rng.choose(5))).map { _ in FactGenerator.fact(&rng) }
            let bytes = FactCodec.encodeRecord(facts)
            for length in 0..<bytes.count {
                #expect(throws: FactCodecError.self) { try FactCodec.decodeRecord(bytes.prefix(length)) }
            }
            #expect(throws: FactCodecError.self) { try FactCodec.decodeRecord(bytes + [0]) }
        }
        func error(_ bytes: [UInt8]) -> String? {
            do {
                _ = try FactCodec.decodeRecord(bytes)
                return nil
            } catch { return error.message }
        }
        let claim = FactCodec.encode(.claim(Claim(at: 5, owner: "w", partitionCount: 6)))
        #expect(error([2, 1, UInt8(claim.count)] + claim) == "a record of 1 facts")
        #expect(error([2, 2, UInt8(claim.count)] + claim + [UInt8(claim.count + 1)] + claim + [0]) == "1 bytes after the fact")
        #expect(error([2, 2, UInt8(claim.count)] + claim + [UInt8(claim.count)] + claim + [7]) == "1 bytes after the record's facts")
    }
}
