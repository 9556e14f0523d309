// Digest facts in the changelog (``DigestFact``; issue 56 design §4.3), kinds 6 and 7 of
// ``FactCodec``'s version 1. Workers from before digests read a record holding one as damaged
// (counted, read past): upgrade every worker of a group before a mapping with `digest` runs.
//
// ```text
// kind 6 (a member):
//   16 bytes  window
//   string    key, mapping
//   zigzag    opened; varint end − opened
//   string    event ID
//   zigzag    at
//   byte      flags: 1 actor, 2 sent at once, 4 timestamp, 8 record key
//   string    actor?
//   string    owner
//   string    topic; varint partition; zigzag offset; zigzag timestamp?
//   bytes     record key?, value (varint length, then the bytes)
//   varint    header count, each: string name, byte 1 with a value (then bytes) or 0
// kind 7 (closed):
//   16 bytes  window
//   zigzag    at
//   string    owner
//   varint    count, count × string event ID
// ```
extension FactCodec {
    /// The largest record value a member fact carries (Kafka's default `message.max.bytes`).
    public static let maxEventBytes = 1_048_576
    /// Most headers, and most members a closed fact lists.
    public static let maxHeaders = 256
    public static let maxDigestMembers = 100_000

    static func encodeDigest(_ fact: DigestFact, into w: inout [UInt8]) {
        switch fact {
        case .member(let m):
            w.append(6)
            w += m.window.bytes
            w.appendString(m.key)
            w.appendString(m.mapping)
            w.appendZigzag(m.opened)
            w.appendVarint(UInt64(bitPattern: max(0, m.end &- m.opened)))
            w.appendString(m.eventID)
            w.appendZigzag(m.at)
            let e = m.event
            w.append((m.actor == nil ? 0 : 1) | (m.sentAtOnce ? 2 : 0) | (e.timestamp == nil ? 0 : 4) | (e.key == nil ? 0 : 8))
            if let actor = m.actor { w.appendString(actor) }
            w.appendString(m.owner)
            w.appendString(e.topic)
            w.appendVarint(UInt64(UInt32(bitPattern: e.partition)))
            w.appendZigzag(e.offset)
            if let timestamp = e.timestamp { w.appendZigzag(timestamp) }
            if let key = e.key { w.appendBytes(key) }
            w.appendBytes(e.value)
            w.appendVarint(UInt64(e.headers.count))
            for h in e.headers {
                w.appendString(h.name)
                if let value = h.value {
                    w.append(1)
                    w.appendBytes(value)
                } else {
                    w.append(0)
                }
            }
        case .closed(let c):
            w.append(7)
            w += c.window.bytes
            w.appendZigzag(c.at)
            w.appendString(c.owner)
            w.appendVarint(UInt64(c.members.count))
            for id in c.members { w.appendString(id) }
        }
    }

    static func decodeDigest(kind: UInt8, _ r: inout FactReader) throws(FactCodecError) -> DigestFact {
        let window = NotificationID(high: try r.fixed64(), low: try r.fixed64())
        if kind == 7 {
            let at = try r.zigzag()
            let owner = try r.string()
            let count = try r.varint()
            guard count <= UInt64(maxDigestMembers) else { throw FactCodecError("\(count) digest members") }
            var members: [String] = []
            for _ in 0..<count { members.append(try r.string()) }
            return .closed(DigestClosed(window: window, at: at, members: members, owner: owner))
        }
        let key = try r.string()
        let mapping = try r.string()
        let opened = try r.zigzag()
        let length = try r.varint()
        let (end, overflow) = opened.addingReportingOverflow(Int64(bitPattern: length))
        guard length <= UInt64(Int64.max), !overflow else { throw FactCodecError("window end out of range") }
        let eventID = try r.string()
        let at = try r.zigzag()
        let flags = try r.byte()
        guard flags & ~15 == 0 else { throw FactCodecError("unknown flags \(flags)") }
        let actor = flags & 1 != 0 ? try r.string() : nil
        let owner = try r.string()
        let topic = try r.string()
        let partition = try r.varint()
        guard partition <= UInt64(Int32.max) else { throw FactCodecError("partition \(partition) out of range") }
        let offset = try r.zigzag()
        let timestamp = flags & 4 != 0 ? try r.zigzag() : nil
        let recordKey = flags & 8 != 0 ? try r.blob() : nil
        let value = try r.blob()
        let count = try r.varint()
        guard count <= UInt64(maxHeaders) else { throw FactCodecError("\(count) headers") }
        var headers: [DigestHeader] = []
        for _ in 0..<count {
            let name = try r.string()
            let has = try r.byte()
            guard has <= 1 else { throw FactCodecError("header flag \(has)") }
            headers.append(DigestHeader(name: name, value: has == 1 ? try r.blob() : nil))
        }
        let event = DigestEvent(
            topic: topic, partition: Int32(partition), offset: offset, timestamp: timestamp, key: recordKey, value: value, headers: headers)
        return .member(
            DigestMember(
                window: window, key: key, mapping: mapping, opened: opened, end: end, eventID: eventID, at: at, actor: actor,
                sentAtOnce: flags & 2 != 0, event: event, owner: owner))
    }
}

extension [UInt8] {
    /// A varint length, then the bytes (at most ``FactCodec/maxEventBytes``).
    mutating func appendBytes(_ bytes: [UInt8]) {
        precondition(bytes.count <= FactCodec.maxEventBytes, "a digest member's bytes fit a Kafka record")
        appendVarint(UInt64(bytes.count))
        self += bytes
    }
}

extension FactReader {
    mutating func blob() throws(FactCodecError) -> [UInt8] {
        let count = try varint()
        guard count <= UInt64(FactCodec.maxEventBytes) else { throw FactCodecError("\(count) bytes") }
        guard remaining >= Int(count) else { throw FactCodecError("truncated") }
        defer { index += Int(count) }
        return Array(bytes[index..<index + Int(count)])
    }
}
