/// Standard base64 (RFC 4648 §4, with `=` padding), without Foundation: Avro's bytes and fixed
/// and Protobuf's `bytes` are written this way (the proto3 JSON mapping's choice), and
/// registries hand serialized descriptors over this way.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// Each ASCII byte's 6-bit value; 0xFF for bytes outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, symbol) in alphabet.enumerated() { table[Int(symbol)] = UInt8(value) }
        return table
    }()

    static func encode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out.append(alphabet[Int(n >> 18)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            i += 3
        }
        let rest = bytes.count - i
        if rest > 0 {
            let n = UInt32(bytes[i]) << 16 | (rest == 2 ? UInt32(bytes[i + 1]) << 8 : 0)
            out.append(alphabet[Int(n >> 18)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(rest == 2 ? alphabet[Int(n >> 6 & 63)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { encode($0) }
    }

    /// Whether every character but ASCII whitespace is one of base64's 65 (with `=`), and there
    /// is at least one.
    static func looksLikeBase64(_ text: String) -> Bool {
        var any = false
        for byte in text.utf8 {
            if isWhitespace(byte) { continue }
            guard byte == UInt8(ascii: "=") || values[Int(byte)] != 0xFF else { return false }
            any = true
        }
        return any
    }

    /// The bytes `text` encodes; ASCII whitespace is ignored and padding is optional. Nil when a
    /// character is outside the alphabet, padding is misplaced, or the length is impossible.
    static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count / 4 * 3)
        var accumulator: UInt32 = 0
        var pending = 0
        var padding = 0
        for byte in text.utf8 {
            if isWhitespace(byte) { continue }
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            let value = values[Int(byte)]
            guard value != 0xFF, padding == 0 else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            pending += 1
            if pending == 4 {
                out.append(UInt8(accumulator >> 16 & 0xFF))
                out.append(UInt8(accumulator >> 8 & 0xFF))
                out.append(UInt8(accumulator & 0xFF))
                accumulator = 0
                pending = 0
            }
        }
        switch pending {
        case 0: guard padding == 0 else { return nil }
        case 2:
            guard padding == 0 || padding == 2 else { return nil }
            out.append(UInt8(accumulator >> 4 & 0xFF))
        case 3:
            guard padding <= 1 else { return nil }
            out.append(UInt8(accumulator >> 10 & 0xFF))
            out.append(UInt8(accumulator >> 2 & 0xFF))
        default: return nil
        }
        return out
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }
}
