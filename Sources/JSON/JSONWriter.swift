/// Writes JSON deterministically: object members sorted by key, no insignificant whitespace
/// (or indented with `pretty`), non-ASCII kept as UTF-8.
public enum JSONWriter {
    public static func write(_ value: JSONValue, pretty: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(value, into: &out, pretty: pretty, indent: 0)
        return out
    }

    public static func string(_ value: JSONValue, pretty: Bool = false) -> String {
        String(decoding: write(value, pretty: pretty), as: UTF8.self)
    }

    static func write(_ value: JSONValue, into out: inout [UInt8], pretty: Bool, indent: Int) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): writeInteger(i, into: &out)
        case .bigInteger(let text): out.append(contentsOf: text.utf8)
        case .double(let d): out.append(contentsOf: shortest(d).utf8)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, pretty, indent + 1)
                write(item, into: &out, pretty: pretty, indent: indent + 1)
            }
            if !items.isEmpty { newline(&out, pretty, indent) }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            let sorted = isSorted(members) ? members : members.sorted { $0.key < $1.key }
            for (i, member) in sorted.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, pretty, indent + 1)
                writeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                write(member.value, into: &out, pretty: pretty, indent: indent + 1)
            }
            if !members.isEmpty { newline(&out, pretty, indent) }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// The renderer builds members in order already; checking is cheaper than sorting.
    private static func isSorted(_ members: [(key: String, value: JSONValue)]) -> Bool {
        var i = 1
        while i < members.count {
            if !(members[i - 1].key < members[i].key) { return false }
            i += 1
        }
        return true
    }

    private static func newline(_ out: inout [UInt8], _ pretty: Bool, _ indent: Int) {
        guard pretty else { return }
        out.append(0x0A)
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    /// `s` as a JSON string, quotes included and escaped as ``write(_:pretty:)`` escapes it:
    /// for JSON text written around values by hand (a JWT's claims in their own order).
    public static func quoted(_ s: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count + 2)
        writeString(s, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// `s` as a JSON string, quotes included: `"`, `\` and the control characters escaped (`\n`,
    /// `\r`, `\t`, else `\u00XX` in lowercase hex), everything else kept as UTF-8. The one JSON
    /// string escaper.
    package static func writeString(_ s: String, into out: inout [UInt8]) {
        if s.utf8.withContiguousStorageIfAvailable({ writeString(utf8: $0, into: &out) }) == nil {
            var s = s
            s.makeContiguousUTF8()
            s.utf8.withContiguousStorageIfAvailable { writeString(utf8: $0, into: &out) }
        }
    }

    private static func writeString(utf8 bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Copy runs that need no escaping in one append.
        var runStart = 0
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x20 || b == 0x22 || b == 0x5C {
                if runStart < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i])) }
                escape(b, into: &out)
                runStart = i + 1
            }
            i &+= 1
        }
        if runStart < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...])) }
        out.append(UInt8(ascii: "\""))
    }

    /// The shortest decimal that reads back as `d`; integral values below 2^53 without a
    /// fraction part (`2.0` is `2`). Negative zero keeps its sign (`-0`, as Protobuf's JSON
    /// printer writes it): `0` would read back as +0.0.
    public static func shortest(_ d: Double) -> String {
        if d == 0 { return d.sign == .minus ? "-0" : "0" }
        if d == d.rounded(), abs(d) < 9_007_199_254_740_992 { return String(Int64(d)) }
        return d.description  // Swift prints the shortest digits that round-trip
    }

    /// Decimal digits, without making a String.
    package static func writeInteger(_ value: Int64, into out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for 24 digits, filled from the end
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                count += 1
                buffer[24 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: buffer[(24 - count)..<24])
        }
    }

    private static func escape(_ b: UInt8, into out: inout [UInt8]) {
        switch b {
        case 0x22: out.append(contentsOf: [0x5C, 0x22])
        case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
        case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
        case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
        case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
        default:
            let hex: [UInt8] = Array("0123456789abcdef".utf8)
            out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]])
        }
    }
}
