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
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d): out.append(contentsOf: Stringify.number(d).utf8)
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
            let sorted = members.count < 2 ? members : members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
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

    private static func newline(_ out: inout [UInt8], _ pretty: Bool, _ indent: Int) {
        guard pretty else { return }
        out.append(0x0A)
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for b in s.utf8 {
            switch b {
            case 0x22: out.append(contentsOf: [0x5C, 0x22])
            case 0x5C: out.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: out.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 0xF)]])
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
