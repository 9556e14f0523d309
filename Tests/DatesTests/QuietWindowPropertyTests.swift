import Dates
import TestSupport
import Testing

/// `contains`, `end` and `instant` against brute-force definitions, on seeded random instants
/// near DST transitions.
@Suite("Quiet windows against brute force")
struct QuietWindowPropertyTests {
    static let zones = [
        "Europe/Berlin", "America/New_York", "Australia/Sydney", "Australia/Lord_Howe", "Asia/Kathmandu", "Europe/Dublin",
        "Pacific/Apia", "America/Sao_Paulo", "America/Santiago", "Asia/Beirut", "Etc/GMT-3",
    ]
    let database = TimeZoneDatabase(directory: "/usr/share/zoneinfo")

    /// A local date-time's instant found by scanning the minutes around it: the earliest t with
    /// t + offset(t) == local; none (a gap): taken with the offset just before the gap.
    /// Transitions after 1970 fall on whole minutes, as this assumes.
    static func scannedInstant(_ zone: ZoneRules, _ local: Int64) -> Int64 {
        var previousOffset = Int64(zone.offset(atUnixSeconds: local - 30 * 3600 - 60))
        for t in stride(from: local - 30 * 3600, through: local + 30 * 3600, by: 60) {
            let offset = Int64(zone.offset(atUnixSeconds: t))
            if t + offset == local { return t }
            // Local time jumped past `local` between t − 60 and t without reaching it: a gap.
            if t + offset > local { return local - previousOffset }
            previousOffset = offset
        }
        Issue.record("no instant near \(local) in \(zone.name)")
        return 0
    }

    /// Quiet by definition: in the interval of some local date D, for every D around the instant;
    /// the latest end among those that hold it.
    static func bruteEnd(_ w: QuietWindow, _ zone: ZoneRules, _ t: Int64) -> Int64? {
        let day = CivilDate.split(seconds: t + Int64(zone.offset(atUnixSeconds: t))).days
        var best: Int64?
        for d in (day - 4)...(day + 2) {
            let start = zone.instant(localDay: d, secondOfDay: Int32(w.from.minuteOfDay * 60))
            let end = zone.instant(localDay: w.from < w.to ? d : d + 1, secondOfDay: Int32(w.to.minuteOfDay * 60))
            if start <= t, t < end { best = max(best ?? end, end) }
        }
        return best
    }

    /// Instants near the zone's transitions between 1990 and 2060 (the footer's among them).
    func transitionsNear(_ zone: ZoneRules) -> [Int64] {
        var out: [Int64] = []
        var t = utc(1990, 1, 1)
        while t < utc(2060, 1, 1) {
            let p = zone.period(at: t)
            guard p.end < utc(2060, 1, 1) else { break }
            out.append(p.end)
            t = p.end
        }
        return out
    }

    @Test("instant(localDay:secondOfDay:) equals a minute-by-minute scan around every transition", arguments: zones)
    func instants(_ name: String) throws {
        let zone = try #require(database.zone(named: name))
        var rng = SplitMix64(seed: 0x55 ^ UInt64(name.utf8.count))
        var transitions = transitionsNear(zone)
        transitions.shuffle(using: &rng)
        for transition in transitions.prefix(40) {
            for _ in 0..<6 {
                let local = transition + Int64(zone.offset(atUnixSeconds: transition)) + Int64.random(in: -3 * 3600...3 * 3600, using: &rng) / 60 * 60
                let (day, second) = CivilDate.split(seconds: local)
                let expected = Self.scannedInstant(zone, local)
                #expect(zone.instant(localDay: day, secondOfDay: Int32(second)) == expected, "\(name) local \(local)")
            }
        }
    }

    @Test("contains and end agree with the union of every date's interval", arguments: zones)
    func windows(_ name: String) throws {
        let zone = try #require(database.zone(named: name))
        var rng = SplitMix64(seed: 0xA11CE ^ UInt64(name.utf8.count))
        let transitions = transitionsNear(zone)
        var quiet = 0
        for _ in 0..<400 {
            let from = try #require(ClockTime(minuteOfDay: Int.random(in: 0..<1440, using: &rng)))
            var to = try #require(ClockTime(minuteOfDay: Int.random(in: 0..<1440, using: &rng)))
            if to == from { to = try #require(ClockTime(minuteOfDay: (from.minuteOfDay + 1) % 1440)) }
            let w = try #require(QuietWindow(from: from, to: to))
            let near = transitions.isEmpty ? utc(2027, 3, 28) : transitions.randomElement(using: &rng)!
            let t = near + Int64.random(in: -36 * 3600...36 * 3600, using: &rng)
            let expected = Self.bruteEnd(w, zone, t)
            #expect(w.contains(unixSeconds: t, in: zone) == (expected != nil), "\(name) \(from)–\(to) at \(t)")
            if var end = expected {
                quiet += 1
                // Quiet hours end at the first instant no window holds.
                while let next = Self.bruteEnd(w, zone, end) { end = next }
                #expect(w.end(containing: t, in: zone) == end, "\(name) \(from)–\(to) at \(t)")
            }
        }
        #expect(quiet > 50)
    }
}
