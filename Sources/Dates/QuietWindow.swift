/// A clock time of day, `HH:MM` from 00:00 to 23:59.
public struct ClockTime: Sendable, Equatable, Hashable, Comparable, CustomStringConvertible {
    /// 0 ..< 1440.
    public let minuteOfDay: Int

    /// Exactly `HH:MM`, two digits each (`7:30`, `24:00` and `07:30:00` are not).
    public init?(_ text: String) {
        let b = Array(text.utf8)
        func digit(_ k: Int) -> Int? { b[k] >= 0x30 && b[k] <= 0x39 ? Int(b[k] - 0x30) : nil }
        guard b.count == 5, b[2] == UInt8(ascii: ":"), let h1 = digit(0), let h2 = digit(1), let m1 = digit(3), let m2 = digit(4)
        else { return nil }
        guard h1 * 10 + h2 <= 23, m1 * 10 + m2 <= 59 else { return nil }
        self.init(minuteOfDay: (h1 * 10 + h2) * 60 + m1 * 10 + m2)
    }

    public init?(minuteOfDay: Int) {
        guard (0..<1440).contains(minuteOfDay) else { return nil }
        self.minuteOfDay = minuteOfDay
    }

    public var description: String {
        let h = minuteOfDay / 60
        let m = minuteOfDay % 60
        return (h < 10 ? "0" : "") + String(h) + ":" + (m < 10 ? "0" : "") + String(m)
    }

    public static func < (a: ClockTime, b: ClockTime) -> Bool { a.minuteOfDay < b.minuteOfDay }

    var secondOfDay: Int32 { Int32(minuteOfDay * 60) }
}

/// Quiet hours `{from, to}` in a zone's local time (docs/architecture.md, "Time zones").
///
/// For each local date D the window is the instants `[resolve(D, from), resolve(D, to))` when
/// `from < to`, else `[resolve(D, from), resolve(D + 1, to))` (across midnight), `resolve`
/// being ``ZoneRules/instant(localDay:secondOfDay:)`` ("compatible": a time in a gap lands
/// after it, a repeated time is its earlier occurrence). So there is one interval per night
/// however the clocks change: 22:00–07:30 on Berlin's spring-forward night lasts 8 h 30, on
/// the fall-back night 10 h 30. Half-open: at exactly `to` it is no longer quiet.
public struct QuietWindow: Sendable, Equatable, Hashable {
    public let from: ClockTime
    public let to: ClockTime

    /// nil when `from == to` (an empty or a 24-hour window: neither is meant).
    public init?(from: ClockTime, to: ClockTime) {
        guard from != to else { return nil }
        self.from = from
        self.to = to
    }

    /// Whether an instant (seconds since the epoch) is in quiet hours in a zone.
    public func contains(unixSeconds t: Int64, in zone: ZoneRules) -> Bool {
        windowEnd(containing: t, in: zone) != nil
    }

    /// The instant quiet hours end, for an instant in them (nil when it is not): the end of the
    /// window holding it, or when another window holds that end too (only where clocks jump
    /// by many hours), of that one: the first instant that is not quiet. Issue 56's deferred
    /// delivery sends at it.
    public func end(containing t: Int64, in zone: ZoneRules) -> Int64? {
        guard var end = windowEnd(containing: t, in: zone) else { return nil }
        // Windows of consecutive dates overlap only where a gap pushes one's end past the
        // next one's start; a few steps cover any real zone.
        for _ in 0..<4 {
            guard let next = windowEnd(containing: end, in: zone) else { break }
            end = next
        }
        return end
    }

    /// The latest end among the windows that hold `t`.
    ///
    /// Only the windows of the instant's local date E, E − 1 and E − 2 can hold it: a window
    /// of a later date starts at a local time on or after that date, and one of E − 2 reaches
    /// into E only after a jump past midnight (Pacific/Apia skipped 2011-12-30: the window of
    /// the 29th ends on the 31st). A window is resolved only when the instant's local time is
    /// near it: a resolved instant's local time differs from the wall-clock time it was asked
    /// for by at most the zone's offset spread (its greatest offset less its least), so one
    /// offset lookup answers most instants of a day, and two or four resolutions the rest.
    private func windowEnd(containing t: Int64, in zone: ZoneRules) -> Int64? {
        let local = t + Int64(zone.offset(atUnixSeconds: t))
        let localDay = CivilDate.split(seconds: local).days
        let spread = zone.offsetSpread
        let endDayOffset: Int64 = from < to ? 0 : 1
        var found: Int64?
        for day in stride(from: localDay, through: localDay - 2, by: -1) {
            // t ≥ start needs local ≥ start's wall clock − spread; t < end needs local <
            // end's wall clock + 2 × spread (a gap moves a resolved end later by ≤ spread).
            guard local >= day * 86_400 + Int64(from.secondOfDay) - spread,
                local < (day + endDayOffset) * 86_400 + Int64(to.secondOfDay) + 2 * spread,
                t >= zone.instant(localDay: day, secondOfDay: from.secondOfDay)
            else { continue }
            let end = zone.instant(localDay: day + endDayOffset, secondOfDay: to.secondOfDay)
            if t < end { found = max(found ?? end, end) }
        }
        return found
    }
}
