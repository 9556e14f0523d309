extension PosixTimeZone {
    /// Parses a POSIX TZ string as a TZif footer carries it:
    /// `std offset [dst [offset] ,start[/time],end[/time]]`.
    ///
    /// - Throws: ``ZoneRulesError`` when the string is not one. A daylight name without a rule
    ///   (`EST5EDT`) is refused: POSIX leaves its dates to the implementation and zic never
    ///   writes one.
    package init(_ text: String) throws(ZoneRulesError) {
        var reader = Reader(bytes: Array(text.utf8))
        try reader.designation()
        let standard = -(try reader.offset(maxHours: 24))
        guard !reader.atEnd else {
            self.init(standardOffset: Int32(standard), daylight: nil)
            return
        }
        try reader.designation()
        var daylight = standard + 3600
        if !reader.atEnd, reader.peek != UInt8(ascii: ",") { daylight = -(try reader.offset(maxHours: 24)) }
        guard reader.skip(",") else { throw reader.failure("a daylight time without a rule (`,start,end`)") }
        let start = try reader.rule()
        guard reader.skip(",") else { throw reader.failure("no end rule after the start rule") }
        let end = try reader.rule()
        guard reader.atEnd else { throw reader.failure("unexpected text after the end rule") }
        self.init(
            standardOffset: Int32(standard), daylight: Daylight(offset: Int32(daylight), start: start, end: end))
    }
}

private struct Reader {
    let bytes: [UInt8]
    var i = 0

    var atEnd: Bool { i == bytes.count }
    var peek: UInt8? { i < bytes.count ? bytes[i] : nil }

    func failure(_ what: String) -> ZoneRulesError {
        ZoneRulesError("POSIX TZ string \"\(String(decoding: bytes, as: UTF8.self))\": \(what) at offset \(i)")
    }

    mutating func skip(_ char: Unicode.Scalar) -> Bool {
        guard peek == UInt8(ascii: char) else { return false }
        i += 1
        return true
    }

    /// A time zone designation: three or more letters, or `<…>` around three or more letters,
    /// digits, `+` or `-` (RFC 8536 §3.3).
    mutating func designation() throws(ZoneRulesError) {
        let begin = i
        if skip("<") {
            while let c = peek, isAlphanumeric(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: "-") { i += 1 }
            guard i - begin - 1 >= 3 else { throw failure("a quoted designation needs three or more characters") }
            guard skip(">") else { throw failure("a quoted designation without `>`") }
        } else {
            while let c = peek, isLetter(c) { i += 1 }
            guard i - begin >= 3 else { throw failure("a designation needs three or more letters") }
        }
    }

    /// `[+-]hh[:mm[:ss]]` in seconds, as written (west of UT positive for offsets).
    mutating func offset(maxHours: Int64) throws(ZoneRulesError) -> Int64 {
        var sign: Int64 = 1
        if skip("-") { sign = -1 } else { _ = skip("+") }
        guard let hours = number(maxDigits: maxHours > 99 ? 3 : 2), hours <= maxHours else {
            throw failure("hours must be 0…\(maxHours)")
        }
        var seconds = hours * 3600
        if skip(":") {
            guard let minutes = number(maxDigits: 2), minutes <= 59 else { throw failure("minutes must be 00…59") }
            seconds += minutes * 60
            if skip(":") {
                guard let s = number(maxDigits: 2), s <= 59 else { throw failure("seconds must be 00…59") }
                seconds += s
            }
        }
        return sign * seconds
    }

    /// `Jn`, `n` or `Mm.w.d`, then an optional `/time` (default 02:00).
    mutating func rule() throws(ZoneRulesError) -> PosixTimeZone.Rule {
        let day: PosixTimeZone.Rule.Day
        if skip("J") {
            guard let n = number(maxDigits: 3), (1...365).contains(n) else { throw failure("`Jn` needs n in 1…365") }
            day = .julian(n)
        } else if skip("M") {
            guard let month = number(maxDigits: 2), (1...12).contains(month), skip("."),
                let week = number(maxDigits: 1), (1...5).contains(week), skip("."),
                let weekday = number(maxDigits: 1), (0...6).contains(weekday)
            else { throw failure("`Mm.w.d` needs m 1…12, w 1…5, d 0…6") }
            day = .monthWeekDay(month: month, week: week, weekday: weekday)
        } else {
            guard let n = number(maxDigits: 3), (0...365).contains(n) else { throw failure("a day `n` needs n in 0…365") }
            day = .zeroBased(n)
        }
        let time = skip("/") ? try offset(maxHours: 167) : 7200
        return PosixTimeZone.Rule(day: day, time: time)
    }

    private mutating func number(maxDigits: Int) -> Int64? {
        var n: Int64 = 0
        var digits = 0
        while let c = peek, c >= 0x30, c <= 0x39, digits < maxDigits {
            n = n * 10 + Int64(c - 0x30)
            digits += 1
            i += 1
        }
        return digits > 0 ? n : nil
    }

    private func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") }
    private func isAlphanumeric(_ c: UInt8) -> Bool { isLetter(c) || (c >= 0x30 && c <= 0x39) }
}
