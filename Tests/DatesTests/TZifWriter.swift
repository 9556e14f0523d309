/// Writes TZif files byte by byte as RFC 8536 §3 lays them out, for fixtures: a header, a data
/// block, and for version 2+ a second header, a 64-bit block and the footer.
struct TZifWriter {
    struct TimeType {
        var offset: Int32
        var isdst: UInt8 = 0
        var designation: UInt8 = 0
    }

    /// 0 (version 1) or the ASCII digit "2", "3", "4".
    var version: UInt8 = UInt8(ascii: "2")
    var transitions: [(at: Int64, type: UInt8)] = []
    var types: [TimeType] = [TimeType(offset: 0)]
    var designations = "UTC\0"
    /// Written between the newlines after a version 2+ block; nil: no footer at all (malformed).
    var footer: String? = ""
    var leapRecords = 0
    var indicators = true

    func bytes() -> [UInt8] {
        var out = header(version: version)
        block(into: &out, timeSize: 4)
        guard version != 0 else { return out }
        out += header(version: version)
        block(into: &out, timeSize: 8)
        if let footer { out += Array("\n\(footer)\n".utf8) }
        return out
    }

    private func header(version: UInt8) -> [UInt8] {
        let n = indicators ? types.count : 0
        var out = Array("TZif".utf8) + [version] + [UInt8](repeating: 0, count: 15)
        for count in [n, n, leapRecords, transitions.count, types.count, designations.utf8.count] {
            out += be(UInt64(count), 4)
        }
        return out
    }

    private func block(into out: inout [UInt8], timeSize: Int) {
        for t in transitions { out += be(UInt64(bitPattern: t.at), timeSize) }
        out += transitions.map(\.type)
        for t in types { out += be(UInt64(UInt32(bitPattern: t.offset)), 4) + [t.isdst, t.designation] }
        out += Array(designations.utf8)
        for k in 0..<leapRecords { out += be(UInt64(78_796_800 + k), timeSize) + be(UInt64(k + 1), 4) }
        if indicators { out += [UInt8](repeating: 0, count: types.count * 2) }
    }

    private func be(_ v: UInt64, _ size: Int) -> [UInt8] { (0..<size).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
}
