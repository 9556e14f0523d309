/// How a resource file's text was encoded.
public enum TextEncoding: String, Sendable, Equatable {
    case utf8 = "UTF-8"
    case utf8BOM = "UTF-8 with BOM"
    case utf16LE = "UTF-16LE"
    case utf16BE = "UTF-16BE"
}

/// Decodes resource files: UTF-8 (with or without a BOM) and UTF-16 in either byte order,
/// which `.strings` files often are (with a BOM; without one, a NUL in every other byte of ASCII
/// text gives the order away).
public enum TextDecoding {
    /// The text and its encoding, or nil if the bytes are valid in none of them.
    public static func decode(_ bytes: [UInt8]) -> (text: String, encoding: TextEncoding)? {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            return String(validating: bytes.dropFirst(3), as: UTF8.self).map { ($0, .utf8BOM) }
        }
        if bytes.starts(with: [0xFF, 0xFE]) {
            return utf16(bytes.dropFirst(2), littleEndian: true).map { ($0, .utf16LE) }
        }
        if bytes.starts(with: [0xFE, 0xFF]) {
            return utf16(bytes.dropFirst(2), littleEndian: false).map { ($0, .utf16BE) }
        }
        if let text = String(validating: bytes, as: UTF8.self), !(bytes.count >= 2 && (bytes[0] == 0 || bytes[1] == 0)) {
            return (text, .utf8)
        }
        if bytes.count >= 2, bytes[1] == 0, bytes[0] != 0 {
            return utf16(bytes[...], littleEndian: true).map { ($0, .utf16LE) }
        }
        if bytes.count >= 2, bytes[0] == 0, bytes[1] != 0 {
            return utf16(bytes[...], littleEndian: false).map { ($0, .utf16BE) }
        }
        return String(validating: bytes, as: UTF8.self).map { ($0, .utf8) }
    }

    /// UTF-8 bytes for an XML parser: UTF-8 as is (BOM removed), UTF-16 transcoded.
    public static func utf8Bytes(_ bytes: [UInt8]) -> [UInt8]? {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return Array(bytes.dropFirst(3)) }
        if bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xFE, 0xFF]) {
            return decode(bytes).map { Array($0.text.utf8) }
        }
        return bytes
    }

    private static func utf16(_ bytes: ArraySlice<UInt8>, littleEndian: Bool) -> String? {
        guard bytes.count % 2 == 0 else { return nil }
        var units: [UInt16] = []
        units.reserveCapacity(bytes.count / 2)
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let a = UInt16(bytes[i])
            let b = UInt16(bytes[i + 1])
            units.append(littleEndian ? a | b << 8 : a << 8 | b)
            i += 2
        }
        return String(validating: units, as: UTF16.self)
    }
}
