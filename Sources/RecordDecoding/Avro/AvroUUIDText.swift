/// A UUID held in a fixed of 16 bytes as text, in the 8-4-4-4-12 hex form (other bytes and
/// fixed values are written in base64).
enum AvroUUIDText {
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
