import TestSupport

/// The bytes hex text spells (the fixtures' form); spaces are ignored.
func hexBytes(_ hex: String) -> [UInt8] {
    let digits = Array(hex.utf8.filter { $0 != UInt8(ascii: " ") })
    func nibble(_ c: UInt8) -> UInt8 { c <= UInt8(ascii: "9") ? c - UInt8(ascii: "0") : (c | 0x20) - UInt8(ascii: "a") + 10 }
    return stride(from: 0, to: digits.count - 1, by: 2).map { nibble(digits[$0]) << 4 | nibble(digits[$0 + 1]) }
}

extension SplitMix64 {
    /// A number in `0 ..< n` for the fuzz tests' choices (0 when `n` ≤ 1, drawing nothing).
    mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(next() % UInt64(n)) }
}
