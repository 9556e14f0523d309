extension ZoneRules {
    /// Parses a TZif file (RFC 8536; versions 1 to 4). A version 2+ file is read from its
    /// 64-bit block and footer (the 32-bit block is skipped, as §4 tells readers to); a version
    /// 1 file from its 32-bit block, the last transition's offset then lasting forever.
    ///
    /// - Throws: ``ZoneRulesError`` saying what is wrong: not TZif, a version it does not know,
    ///   counts the RFC forbids, data cut short, transitions out of order or of a type that
    ///   does not exist, an offset outside −24:59:59…25:59:59, a footer that is not a POSIX TZ
    ///   string, or leap-second records (a `right/` zone: its transition times count leap
    ///   seconds, which Unix time does not). Never traps, whatever the bytes.
    package init(name: String, tzif bytes: [UInt8]) throws(ZoneRulesError) {
        var reader = TZifReader(bytes: bytes)
        let first = try reader.header()
        guard first.version >= 2 else {
            let block = try reader.block(first, timeSize: 4)
            self.init(name: name, transitions: block.transitions, offsets: block.offsets, initialOffset: block.initial, footer: nil)
            return
        }
        try reader.skip(first.blockLength(timeSize: 4), what: "the version 1 data block")
        let second = try reader.header()
        let block = try reader.block(second, timeSize: 8)
        let text = try reader.footer()
        let footer: PosixTimeZone? = text.isEmpty ? nil : try PosixTimeZone(text)
        self.init(name: name, transitions: block.transitions, offsets: block.offsets, initialOffset: block.initial, footer: footer)
    }
}

private struct TZifHeader {
    var version: Int
    var isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt: Int

    func blockLength(timeSize: Int) -> Int {
        timecnt * timeSize + timecnt + typecnt * 6 + charcnt + leapcnt * (timeSize + 4) + isstdcnt + isutcnt
    }
}

private struct TZifReader {
    let bytes: [UInt8]
    var i = 0

    func failure(_ what: String) -> ZoneRulesError { ZoneRulesError("TZif: \(what) (at byte \(i) of \(bytes.count))") }

    mutating func skip(_ count: Int, what: String) throws(ZoneRulesError) {
        guard count <= bytes.count - i else { throw failure("the file ends inside \(what)") }
        i += count
    }

    /// RFC 8536 §3.1: "TZif", a version byte (0 or '2'…'4'), 15 unused bytes, six 32-bit
    /// big-endian counts.
    mutating func header() throws(ZoneRulesError) -> TZifHeader {
        guard bytes.count - i >= 44 else { throw failure("the file ends inside a header") }
        guard bytes[i..<i + 4].elementsEqual("TZif".utf8) else { throw failure("not a TZif file (no \"TZif\" magic)") }
        let version: Int
        switch bytes[i + 4] {
        case 0: version = 1
        case UInt8(ascii: "2")...UInt8(ascii: "4"): version = Int(bytes[i + 4] - UInt8(ascii: "0"))
        default: throw failure("unknown version byte \(bytes[i + 4])")
        }
        i += 20
        var counts: [Int] = []
        for _ in 0..<6 { counts.append(Int(read(4))) }
        let h = TZifHeader(
            version: version, isutcnt: counts[0], isstdcnt: counts[1], leapcnt: counts[2], timecnt: counts[3], typecnt: counts[4],
            charcnt: counts[5])
        guard h.typecnt > 0 else { throw failure("typecnt is zero") }
        guard h.charcnt > 0 else { throw failure("charcnt is zero") }
        guard h.isutcnt == 0 || h.isutcnt == h.typecnt else { throw failure("isutcnt is neither zero nor typecnt") }
        guard h.isstdcnt == 0 || h.isstdcnt == h.typecnt else { throw failure("isstdcnt is neither zero nor typecnt") }
        guard h.leapcnt == 0 else { throw failure("leap-second records (a right/ zone; Unix time has no leap seconds)") }
        return h
    }

    /// The data block (RFC 8536 §3.2): transition times, their types, the local time type
    /// records; designations and the indicators are checked for length and skipped.
    mutating func block(_ h: TZifHeader, timeSize: Int) throws(ZoneRulesError) -> (transitions: [Int64], offsets: [Int32], initial: Int32) {
        guard h.blockLength(timeSize: timeSize) <= bytes.count - i else { throw failure("the file ends inside the data block") }
        var transitions: [Int64] = []
        transitions.reserveCapacity(h.timecnt)
        for _ in 0..<h.timecnt {
            let raw = read(timeSize)
            let t = timeSize == 4 ? Int64(Int32(truncatingIfNeeded: raw)) : Int64(bitPattern: raw)
            guard transitions.last.map({ $0 < t }) ?? true else { throw failure("transition times are not strictly ascending") }
            transitions.append(t)
        }
        let typeIndices = bytes[i..<i + h.timecnt].map(Int.init)
        i += h.timecnt
        var types: [Int32] = []
        for _ in 0..<h.typecnt {
            let offset = Int32(truncatingIfNeeded: read(4))
            // RFC 8536 §3.2: "SHOULD be in the range -89999 through 93599" (−24:59:59 … 25:59:59).
            guard (-89_999...93_599).contains(offset) else { throw failure("UT offset \(offset) s is outside −24:59:59…25:59:59") }
            guard bytes[i] <= 1 else { throw failure("isdst is \(bytes[i]), not 0 or 1") }
            guard Int(bytes[i + 1]) < h.charcnt else { throw failure("a designation index past the designations") }
            i += 2
            types.append(offset)
        }
        guard typeIndices.allSatisfy({ $0 < h.typecnt }) else { throw failure("a transition of a type that does not exist") }
        i += h.charcnt + h.leapcnt * (timeSize + 4) + h.isstdcnt + h.isutcnt
        return (transitions, typeIndices.map { types[$0] }, types[0])
    }

    /// The version 2+ footer (RFC 8536 §3.3): a newline, a POSIX TZ string (maybe empty), a
    /// newline.
    mutating func footer() throws(ZoneRulesError) -> String {
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\n") else { throw failure("no footer after the version 2+ data block") }
        guard let end = bytes[(i + 1)...].firstIndex(of: UInt8(ascii: "\n")) else { throw failure("the footer has no closing newline") }
        let text = bytes[(i + 1)..<end]
        guard text.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { throw failure("the footer is not printable ASCII") }
        i = end + 1
        return String(decoding: text, as: UTF8.self)
    }

    /// A big-endian unsigned integer of `size` bytes; the caller has checked the length.
    private mutating func read(_ size: Int) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<size { v = v << 8 | UInt64(bytes[i + k]) }
        i += size
        return v
    }
}
