// A changelog record holds one fact (version 1, ``FactCodec/encode(_:)``) or several written
// together (version 2): an owner's facts that wait while its previous record is in flight go
// out in one record (group commit), so a busy partition pays Kafka's per-record cost once per
// batch, not once per fact. Every fact of a record has the record's offset.
//
// Layout, version 2:
//
// ```text
// byte     version (2)
// varint   count (2 … maxFactsPerRecord)
// count ×  varint length, then that many bytes: one fact as version 1 encodes it
// ```
extension FactCodec {
    public static let batchVersion: UInt8 = 2
    /// Most facts in one record (about 80 bytes each: a record stays far below Kafka's 1 MB).
    public static let maxFactsPerRecord = 1_000

    /// A record's bytes for `facts` (at least one, at most ``maxFactsPerRecord``): a lone fact
    /// as version 1, several as version 2.
    public static func encodeRecord(_ facts: [Fact]) -> [UInt8] {
        precondition((1...maxFactsPerRecord).contains(facts.count), "a record holds 1 to \(maxFactsPerRecord) facts")
        if facts.count == 1 { return encode(facts[0]) }
        var w = [batchVersion]
        w.appendVarint(UInt64(facts.count))
        for fact in facts {
            let bytes = encode(fact)
            w.appendVarint(UInt64(bytes.count))
            w += bytes
        }
        return w
    }

    /// The facts of a record of either version, in the order written.
    /// - Throws: ``FactCodecError`` when any part of it is not a whole fact: a record is taken
    ///   whole or not at all.
    public static func decodeRecord(_ bytes: some Collection<UInt8>) throws(FactCodecError) -> [Fact] {
        let all = Array(bytes)
        guard all.first == batchVersion else { return [try decode(all)] }
        var r = FactReader(all)
        _ = try r.byte()
        let count = try r.varint()
        guard (2...UInt64(maxFactsPerRecord)).contains(count) else { throw FactCodecError("a record of \(count) facts") }
        var facts: [Fact] = []
        facts.reserveCapacity(Int(count))
        for _ in 0..<count {
            let length = try r.varint()
            guard length <= UInt64(r.remaining) else { throw FactCodecError("truncated") }
            facts.append(try decode(all[r.index..<r.index + Int(length)]))
            r.index += Int(length)
        }
        guard r.atEnd else { throw FactCodecError("\(r.remaining) bytes after the record's facts") }
        return facts
    }
}
