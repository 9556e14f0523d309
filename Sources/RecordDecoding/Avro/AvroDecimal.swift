/// The exact text of an Avro decimal: a two's-complement big-endian unscaled integer of any
/// length, and a scale (`1180`, scale 2 → `11.80`; `-5`, scale 2 → `-0.05`).
///
/// Converted through base 10⁹ limbs rather than Foundation's Decimal, which holds only 38 digits.
enum AvroDecimal {
    /// nil when the value has more significant bytes than `precision` digits can ever need
    /// (which also bounds the conversion's work, quadratic in the length).
    static func text(_ raw: UnsafeBufferPointer<UInt8>, precision: Int, scale: Int) -> String? {
        guard let first = raw.first else { return place(point: [UInt8(ascii: "0")], scale: scale, negative: false) }
        let negative = first >= 0x80
        // Leading 0x00 (or 0xFF) bytes that only repeat the next byte's sign carry no digits.
        let filler: UInt8 = negative ? 0xff : 0
        var start = 0
        while start + 1 < raw.count, raw[start] == filler, (raw[start + 1] >= 0x80) == negative { start += 1 }
        guard raw.count - start <= precision * 1_000 / 2_408 + 2 else { return nil }  // log₂10 / 8 ≈ 0.4152 bytes a digit

        var magnitude = Array(raw[start...])
        if negative {
            // Two's complement: invert, then add one.
            for i in magnitude.indices { magnitude[i] = ~magnitude[i] }
            var i = magnitude.count - 1
            while i >= 0 {
                let (sum, carried) = magnitude[i].addingReportingOverflow(1)
                magnitude[i] = sum
                if !carried { break }
                i -= 1
            }
        }
        return place(point: decimalDigits(magnitude), scale: scale, negative: negative)
    }

    /// The decimal digits of the big-endian unsigned integer `magnitude` ("0" for zero).
    private static func decimalDigits(_ magnitude: [UInt8]) -> [UInt8] {
        let base: UInt64 = 1_000_000_000
        var limbs: [UInt64] = []  // least significant first, each below 10⁹
        for byte in magnitude {
            var carry = UInt64(byte)
            for i in limbs.indices {
                let value = limbs[i] << 8 | carry
                limbs[i] = value % base
                carry = value / base
            }
            while carry > 0 {
                limbs.append(carry % base)
                carry /= base
            }
        }
        guard let top = limbs.last else { return [UInt8(ascii: "0")] }
        var digits: [UInt8] = []
        digits.reserveCapacity(limbs.count * 9)
        var topDigits: [UInt8] = []
        var rest = top
        repeat {
            topDigits.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        digits += topDigits.reversed()
        for limb in limbs.dropLast().reversed() {
            var divisor: UInt64 = 100_000_000
            while divisor > 0 {
                digits.append(UInt8(ascii: "0") + UInt8(limb / divisor % 10))
                divisor /= 10
            }
        }
        return digits
    }

    /// The digits with the decimal point `scale` places from the right, and a sign.
    private static func place(point digits: [UInt8], scale: Int, negative: Bool) -> String {
        var out: [UInt8] = negative ? [UInt8(ascii: "-")] : []
        guard scale > 0 else { return String(decoding: out + digits, as: UTF8.self) }
        let padded = digits.count > scale ? digits : [UInt8](repeating: UInt8(ascii: "0"), count: scale + 1 - digits.count) + digits
        out += padded[..<(padded.count - scale)]
        out.append(UInt8(ascii: "."))
        out += padded[(padded.count - scale)...]
        return String(decoding: out, as: UTF8.self)
    }
}
