/// UTF-8 validation for Avro strings and map keys (RFC 3629: no overlong forms, no surrogates,
/// nothing above U+10FFFF).
///
/// The standard library's `String(validating:as:)` does the same but goes through generic
/// metadata on every call, which cost more than the rest of a small record's decoding.
enum AvroUTF8 {
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var i = 0
        let count = bytes.count
        // ASCII, the common case, eight bytes at a time until a byte has its high bit set.
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while i + 8 <= count, raw.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 { i += 8 }
        }
        while i < count {
            let lead = bytes[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            // The allowed range of the second byte depends on the lead; the others are 80…BF.
            let length: Int
            var low: UInt8 = 0x80
            var high: UInt8 = 0xbf
            switch lead {
            case 0xc2...0xdf: length = 2
            case 0xe0:
                length = 3
                low = 0xa0
            case 0xe1...0xec, 0xee...0xef: length = 3
            case 0xed:
                length = 3
                high = 0x9f
            case 0xf0:
                length = 4
                low = 0x90
            case 0xf1...0xf3: length = 4
            case 0xf4:
                length = 4
                high = 0x8f
            default: return false
            }
            guard i + length <= count, bytes[i + 1] >= low, bytes[i + 1] <= high else { return false }
            for j in 2..<length where bytes[i + j] & 0xc0 != 0x80 { return false }
            i += length
        }
        return true
    }
}
