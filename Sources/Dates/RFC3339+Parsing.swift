extension RFC3339 {
    /// Milliseconds since the Unix epoch for an RFC 3339 date-time with a zone
    /// (`2026-11-22T10:00:00Z`, `2026-11-22T11:00:00.5+01:00`); nil if it is not one.
    ///
    /// Read per event (a mapping's `occurred_at`), so it is a byte loop, not a Foundation
    /// formatter. Digits past milliseconds are dropped (an instant is never moved later); a leap
    /// second (`:60`) reads as the second after `:59`. `t`, `z` and a space for the `T` are
    /// accepted, as RFC 3339 §5.6 allows.
    public static func parseMilliseconds(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { parse(Array($0)) }
    }

    private static func parse(_ b: [UInt8]) -> Int64? {
        var i = 0
        func number(_ width: Int) -> Int64? {
            guard i + width <= b.count else { return nil }
            var n: Int64 = 0
            for _ in 0..<width {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                n = n * 10 + Int64(b[i] - 0x30)
                i += 1
            }
            return n
        }
        func expect(_ chars: String) -> Bool {
            guard i < b.count, chars.utf8.contains(b[i]) else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2), expect("Tt "),
            let hour = number(2), expect(":"), let minute = number(2), expect(":"), let second = number(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= CivilDate.daysIn(month: month, year: year), hour <= 23, minute <= 59, second <= 60
        else { return nil }
        var millis: Int64 = 0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 {
                if digits < 3 { millis = millis * 10 + Int64(b[i] - 0x30) }
                digits += 1
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<max(digits, 3) { millis *= 10 }
        }
        var offsetMinutes: Int64 = 0
        if expect("Zz") {
            offsetMinutes = 0
        } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
            let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
            i += 1
            guard let h = number(2), expect(":"), let m = number(2), h <= 23, m <= 59 else { return nil }
            offsetMinutes = sign * (h * 60 + m)
        } else {
            return nil  // a time without a zone is not an instant
        }
        guard i == b.count else { return nil }
        let seconds = CivilDate.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second - offsetMinutes * 60
        return seconds * 1000 + millis
    }
}
