/// Bytes as text: standard base64 with padding for bytes and fixed values, and the 8-4-4-4-12
/// hex form for a UUID held in a fixed of 16 bytes.
enum AvroBytesText {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func base64(_ raw: UnsafeBufferPointer<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((raw.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= raw.count {
            let group = UInt32(raw[i]) << 16 | UInt32(raw[i + 1]) << 8 | UInt32(raw[i + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int(group >> UInt32(shift) & 63)]) }
            i += 3
        }
        let left = raw.count - i
        if left > 0 {
            let group = UInt32(raw[i]) << 16 | (left == 2 ? UInt32(raw[i + 1]) << 8 : 0)
            out.append(alphabet[Int(group >> 18 & 63)])
            out.append(alphabet[Int(group >> 12 & 63)])
            out.append(left == 2 ? alphabet[Int(group >> 6 & 63)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Lowercase hex in groups of 8-4-4-4-12 digits; `raw` holds 16 bytes.
    static func uuid(_ raw: UnsafeBufferPointer<UInt8>) -> String {
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, byte) in raw.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
