import Dates
import JSON

/// RFC 3339 and proto3 JSON duration text, without Foundation, written digit by digit into a
/// small buffer (a decoded Timestamp costs one string, not one per part).
enum ProtoTime {
    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the range the JSON mapping allows.
    static let minSeconds: Int64 = -62_135_596_800
    static let maxSeconds: Int64 = 253_402_300_799
    /// About 10,000 years, the Duration's documented range.
    static let maxDurationSeconds: Int64 = 315_576_000_000

    /// `2026-11-24T09:30:00.123Z`, in UTC; nil outside the mapping's range.
    static func timestamp(seconds: Int64, nanos: Int32) -> String? {
        guard seconds >= minSeconds, seconds <= maxSeconds, nanos >= 0, nanos < 1_000_000_000 else { return nil }
        let (days, secondOfDay) = CivilDate.split(seconds: seconds)
        let (year, month, day) = CivilDate.from(daysSinceEpoch: days)
        var text: [UInt8] = []
        text.reserveCapacity(30)
        digits(year, 4, &text)
        text.append(UInt8(ascii: "-"))
        digits(month, 2, &text)
        text.append(UInt8(ascii: "-"))
        digits(day, 2, &text)
        text.append(UInt8(ascii: "T"))
        digits(secondOfDay / 3600, 2, &text)
        text.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2, &text)
        text.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2, &text)
        fraction(nanos, &text)
        text.append(UInt8(ascii: "Z"))
        return String(decoding: text, as: UTF8.self)
    }

    /// `1.500s`, `-0.000000500s`; nil outside the documented range or when the signs disagree.
    static func duration(seconds: Int64, nanos: Int32) -> String? {
        guard seconds >= -maxDurationSeconds, seconds <= maxDurationSeconds, nanos > -1_000_000_000, nanos < 1_000_000_000,
            !(seconds > 0 && nanos < 0), !(seconds < 0 && nanos > 0)
        else { return nil }
        var text: [UInt8] = []
        text.reserveCapacity(24)
        if seconds < 0 || nanos < 0 { text.append(UInt8(ascii: "-")) }
        text += String(seconds.magnitude).utf8
        fraction(Int32(nanos.magnitude), &text)
        text.append(UInt8(ascii: "s"))
        return String(decoding: text, as: UTF8.self)
    }

    /// Nothing for whole seconds, else 3, 6 or 9 digits: as few as show the value exactly.
    private static func fraction(_ nanos: Int32, _ text: inout [UInt8]) {
        if nanos == 0 { return }
        text.append(UInt8(ascii: "."))
        if nanos % 1_000_000 == 0 {
            digits(Int64(nanos / 1_000_000), 3, &text)
        } else if nanos % 1000 == 0 {
            digits(Int64(nanos / 1000), 6, &text)
        } else {
            digits(Int64(nanos), 9, &text)
        }
    }

    /// `value` (0 ≤ value < 10^width) in exactly `width` decimal digits.
    private static func digits(_ value: Int64, _ width: Int, _ text: inout [UInt8]) {
        var divisor: Int64 = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            text.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
