import Foundation
import Testing

/// Tests/LocalizationTests/Fixtures, by path.
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// UTF-16 bytes with a byte order mark.
func utf16(_ text: String, littleEndian: Bool) -> [UInt8] {
    var out: [UInt8] = littleEndian ? [0xFF, 0xFE] : [0xFE, 0xFF]
    for unit in text.utf16 {
        let hi = UInt8(unit >> 8), lo = UInt8(unit & 0xFF)
        out += littleEndian ? [lo, hi] : [hi, lo]
    }
    return out
}
