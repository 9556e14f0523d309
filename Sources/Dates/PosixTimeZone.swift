/// The rule of a TZif footer: a POSIX TZ string (POSIX.1-2017 §8.3 `TZ`) with RFC 8536 §3.3's
/// extensions (RFC 9636 keeps them): `<+1030>`-quoted designations, rule times from −167 to
/// 167 hours (`M3.5.0/-1`, `M10.5.0/25`), and daylight time all year
/// (`EST5EDT,0/0,J365/25`). zic writes it for the instants on or after a file's last transition.
///
/// `CET-1CEST,M3.5.0,M10.5.0/3` reads: standard time "CET" 1 hour *east* of UT (POSIX counts
/// west positive), daylight time "CEST" (1 hour ahead of standard, the default), starting on
/// the last (5) Sunday (0) of March at 02:00 (the default) standard time and ending on the last
/// Sunday of October at 03:00 daylight time.
package struct PosixTimeZone: Sendable, Equatable, Hashable {
    /// Standard time's UT offset in seconds, east positive (the string's sign inverted).
    package let standardOffset: Int32
    package let daylight: Daylight?

    package struct Daylight: Sendable, Equatable, Hashable {
        /// Daylight time's UT offset in seconds, east positive (negative DST: Europe/Dublin's
        /// `IST-1GMT0,M10.5.0,M3.5.0/1` has "daylight" GMT 1 hour behind standard IST).
        package let offset: Int32
        /// When daylight time starts, in standard (local) time.
        package let start: Rule
        /// When it ends, in daylight (local) time.
        package let end: Rule

        package init(offset: Int32, start: Rule, end: Rule) {
            self.offset = offset
            self.start = start
            self.end = end
        }
    }

    package struct Rule: Sendable, Equatable, Hashable {
        package enum Day: Sendable, Equatable, Hashable {
            /// `Jn`: day 1 … 365 of the year, February 29 never counted.
            case julian(Int64)
            /// `n`: day 0 … 365 of the year, February 29 counted in leap years.
            case zeroBased(Int64)
            /// `Mm.w.d`: the w-th (5: last) weekday d (0 Sunday) of month m.
            case monthWeekDay(month: Int64, week: Int64, weekday: Int64)
        }
        package let day: Day
        /// Seconds after local midnight of that day, −167 h … 167 h (default 02:00).
        package let time: Int64

        package init(day: Day, time: Int64) {
            self.day = day
            self.time = time
        }
    }

    package init(standardOffset: Int32, daylight: Daylight?) {
        self.standardOffset = standardOffset
        self.daylight = daylight
    }

    /// The UT offset in seconds at an instant.
    package func offset(atUnixSeconds t: Int64) -> Int32 { period(at: t).offset }

    /// The offset in effect at `t` and the instants it starts and stops being in effect.
    ///
    /// The year is computed from the instant (no loop over years); the daylight transitions of
    /// the year before, that year and the year after are compared, which covers rule times that
    /// move a transition across New Year (up to a week either way). Instants beyond ±2^52 s
    /// (±142 million years) are clamped there, so that no arithmetic can overflow.
    package func period(at t: Int64) -> (offset: Int32, start: Int64, end: Int64) {
        guard let daylight else { return (standardOffset, .min, .max) }
        let limit: Int64 = 1 << 52
        let clamped = min(max(t, -limit), limit)
        let year = CivilDate.from(daysSinceEpoch: CivilDate.split(seconds: clamped).days).year
        var latest = Int64.min
        var isDaylight = false
        var next = Int64.max
        // In list order, so that at equal instants (daylight time all year: one year's end is
        // the next one's start) the later one wins. No array: this runs per lookup.
        func consider(_ at: Int64, _ daylight: Bool) {
            if at <= clamped {
                if at >= latest { (latest, isDaylight) = (at, daylight) }
            } else if at < next {
                next = at
            }
        }
        for y in (year - 1)...(year + 1) {
            consider(transition(daylight.start, year: y, offset: standardOffset), true)
            consider(transition(daylight.end, year: y, offset: daylight.offset), false)
        }
        return (isDaylight ? daylight.offset : standardOffset, t <= -limit ? .min : latest, t >= limit ? .max : next)
    }

    /// The instant of a rule's transition in a year: its local day and time, less the offset in
    /// effect before it.
    private func transition(_ rule: Rule, year: Int64, offset: Int32) -> Int64 {
        let day: Int64
        switch rule.day {
        case .julian(let n):
            day = CivilDate.days(year: year, month: 1, day: 1) + n - 1 + (CivilDate.isLeap(year: year) && n >= 60 ? 1 : 0)
        case .zeroBased(let n):
            day = CivilDate.days(year: year, month: 1, day: 1) + n
        case .monthWeekDay(let month, let week, let weekday):
            let first = CivilDate.days(year: year, month: month, day: 1)
            var d = first + (weekday - CivilDate.weekday(daysSinceEpoch: first) + 7) % 7 + 7 * (week - 1)
            let length = CivilDate.daysIn(month: month, year: year)
            while d >= first + length { d -= 7 }
            day = d
        }
        return day * 86_400 + rule.time - Int64(offset)
    }
}

/// What is wrong with a TZif file or a POSIX TZ string.
package struct ZoneRulesError: Error, Equatable, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
