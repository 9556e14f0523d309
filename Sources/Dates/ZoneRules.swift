/// One IANA time zone's rules: UT offsets by instant, read from a TZif file (RFC 8536, which
/// RFC 9636 obsoletes without changing what a reader does), and the instant of a local
/// date-time.
///
/// Lookups are a binary search over the file's transitions, or for instants on or after the
/// last one the footer's POSIX TZ rule computed for the instant's year (``PosixTimeZone``); no
/// allocation either way.
public struct ZoneRules: Sendable, Equatable, Hashable {
    public let name: String
    /// Transition instants, strictly ascending.
    let transitions: [Int64]
    /// `offsets[i]`: the UT offset from `transitions[i]` until the next.
    let offsets: [Int32]
    /// Before the first transition, or always when there are none and no footer: time type 0
    /// (RFC 8536 §3.2: "Local time for timestamps before the first transition is specified by
    /// the first time type (time type 0)").
    let initialOffset: Int32
    /// On or after the last transition, or always when there are none (RFC 8536 §3.2). nil:
    /// a version 1 file or an empty footer ("unspecified"): the last transition's offset stays.
    package let footer: PosixTimeZone?
    /// The least and greatest offsets the zone ever has: where `instant(localDay:secondOfDay:)`
    /// looks for a local time.
    let minOffset: Int32
    let maxOffset: Int32

    /// The greatest offset less the least: how far a local time's instant can move from the
    /// wall-clock time it names.
    var offsetSpread: Int64 { Int64(maxOffset) - Int64(minOffset) }

    init(name: String, transitions: [Int64], offsets: [Int32], initialOffset: Int32, footer: PosixTimeZone?) {
        self.name = name
        self.transitions = transitions
        self.offsets = offsets
        self.initialOffset = initialOffset
        self.footer = footer
        var all = offsets + [initialOffset]
        if let footer { all += [footer.standardOffset, footer.daylight?.offset ?? footer.standardOffset] }
        minOffset = all.min()!
        maxOffset = all.max()!
    }

    /// A zone whose offset never changes.
    public init(name: String, fixedOffsetSeconds: Int32) {
        self.init(name: name, transitions: [], offsets: [], initialOffset: fixedOffsetSeconds, footer: nil)
    }

    public static let utc = ZoneRules(name: "UTC", fixedOffsetSeconds: 0)

    /// UT offset in seconds (east positive) at an instant (seconds since the epoch).
    public func offset(atUnixSeconds t: Int64) -> Int32 { period(at: t).offset }

    /// The offset in effect at `t`, and the instants it starts (inclusive) and stops
    /// (exclusive) being in effect: `.min` / `.max` when it always was / always will be.
    public func period(at t: Int64) -> (offset: Int32, start: Int64, end: Int64) {
        guard let last = transitions.last else {
            return footer?.period(at: t) ?? (initialOffset, .min, .max)
        }
        if t >= last {
            guard let footer else { return (offsets[offsets.count - 1], last, .max) }
            let p = footer.period(at: t)
            return (p.offset, max(p.start, last), p.end)
        }
        if t < transitions[0] { return (initialOffset, .min, transitions[0]) }
        // The last transition at or before t: transitions[lo] <= t < transitions[hi].
        var lo = 0
        var hi = transitions.count - 1
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if transitions[mid] <= t { lo = mid } else { hi = mid }
        }
        return (offsets[lo], transitions[lo], transitions[hi])
    }

    /// The instant of a local date-time: `localDay` days since 1970-01-01 of the local calendar
    /// date, and `secondOfDay` seconds after its midnight.
    ///
    /// RFC 5545 §3.3.5 and TC39 Temporal's `disambiguation: "compatible"` (the default of
    /// `Temporal.ZonedDateTime.from`): a local time in a gap (spring forward) is taken with the
    /// offset before the gap, so it lands after the gap by the gap's length (Berlin 02:30 on
    /// the spring-forward day is 03:30 CEST); a local time that occurs twice (fall back) is the
    /// earlier of the two.
    ///
    /// Walks the periods that can hold the local time (those between `local − maxOffset` and
    /// `local − minOffset`, usually one or two): exact however close transitions are.
    public func instant(localDay: Int64, secondOfDay: Int32) -> Int64 {
        let dayLimit: Int64 = 1 << 40  // ±3 billion years: no overflow below
        let local = min(max(localDay, -dayLimit), dayLimit) * 86_400 + Int64(secondOfDay)
        let latest = local - Int64(minOffset)
        var p = period(at: local - Int64(maxOffset))
        var before = p.offset
        while true {
            let candidate = local - Int64(p.offset)
            // Earlier than this period: the local time is in the gap after the previous one,
            // whose offset (the one before the gap) it is taken with.
            if candidate < p.start { return local - Int64(before) }
            if candidate < p.end { return candidate }
            // Later than this period's local end: the answer is in a later one, or in the gap
            // after it when no later period can hold it.
            guard p.end <= latest else { return candidate }
            before = p.offset
            p = period(at: p.end)
        }
    }
}
