import Dates
import Testing

/// Quiet hours as intervals of instants, one per local date (docs/architecture.md, "Time zones").
@Suite("Quiet windows")
struct QuietWindowTests {
    let database = TimeZoneDatabase(directory: "/usr/share/zoneinfo")

    func window(_ from: String, _ to: String) throws -> QuietWindow {
        let from = try #require(ClockTime(from))
        let to = try #require(ClockTime(to))
        return try #require(QuietWindow(from: from, to: to))
    }

    /// The window holding `start` runs to `end` exactly: quiet from its first second to its last.
    func expectInterval(_ w: QuietWindow, _ zone: ZoneRules, _ start: Int64, _ end: Int64, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!w.contains(unixSeconds: start - 1, in: zone), "before the start", sourceLocation: sourceLocation)
        #expect(w.contains(unixSeconds: start, in: zone), "at the start", sourceLocation: sourceLocation)
        #expect(w.end(containing: start, in: zone) == end, "its end", sourceLocation: sourceLocation)
        #expect(w.end(containing: end - 1, in: zone) == end, "its end, from its last second", sourceLocation: sourceLocation)
        #expect(!w.contains(unixSeconds: end, in: zone), "at the end (half-open)", sourceLocation: sourceLocation)
        #expect(w.end(containing: end, in: zone) == nil, sourceLocation: sourceLocation)
    }

    @Test("clock times: exactly HH:MM")
    func clockTimes() {
        #expect(ClockTime("00:00")?.minuteOfDay == 0)
        #expect(ClockTime("07:30")?.minuteOfDay == 450)
        #expect(ClockTime("23:59")?.minuteOfDay == 1439)
        #expect(ClockTime("07:30")?.description == "07:30")
        for text in ["24:00", "7:30", "07:60", "07:30:00", "0730", "", "ab:cd", "07-30", " 7:30", "+7:30", "０7:30"] {
            #expect(ClockTime(text) == nil, "\(text)")
        }
        #expect(ClockTime(minuteOfDay: 1440) == nil)
        #expect(ClockTime(minuteOfDay: -1) == nil)
        #expect(QuietWindow(from: ClockTime("22:00")!, to: ClockTime("22:00")!) == nil)
    }

    @Test("design §4.2's table: Europe/Berlin's 2027 spring-forward and fall-back nights")
    func berlinTable() throws {
        let berlin = try #require(database.zone(named: "Europe/Berlin"))
        // 22:00 CET → 07:30 CEST: 8 h 30.
        expectInterval(try window("22:00", "07:30"), berlin, utc(2027, 3, 27, 21), utc(2027, 3, 28, 5, 30))
        // 22:00 CEST → 07:30 CET: 10 h 30.
        expectInterval(try window("22:00", "07:30"), berlin, utc(2027, 10, 30, 20), utc(2027, 10, 31, 6, 30))
        // 00:00 CET → "02:30", in the gap: 03:30 CEST, 2 h 30.
        expectInterval(try window("00:00", "02:30"), berlin, utc(2027, 3, 27, 23), utc(2027, 3, 28, 1, 30))
        // "02:30" (03:30 CEST) → 06:00 CEST: 2 h 30.
        expectInterval(try window("02:30", "06:00"), berlin, utc(2027, 3, 28, 1, 30), utc(2027, 3, 28, 4))
        // 22:00 CEST → the earlier 02:30 (CEST): 4 h 30; then 02:30–03:00 CEST and the repeated
        // 02:00–03:00 CET are not quiet.
        let w = try window("22:00", "02:30")
        expectInterval(w, berlin, utc(2027, 10, 30, 20), utc(2027, 10, 31, 0, 30))
        for t in stride(from: utc(2027, 10, 31, 0, 30), to: utc(2027, 10, 31, 20), by: 300) {
            #expect(!w.contains(unixSeconds: t, in: berlin), "\(t)")
        }
    }

    @Test("ordinary days: inside one day and across midnight, boundaries at from and to")
    func ordinaryDays() throws {
        let berlin = try #require(database.zone(named: "Europe/Berlin"))
        expectInterval(try window("13:00", "14:30"), berlin, utc(2027, 7, 1, 11), utc(2027, 7, 1, 12, 30))
        expectInterval(try window("23:00", "01:00"), berlin, utc(2027, 1, 1, 22), utc(2027, 1, 2, 0))
        expectInterval(try window("00:00", "23:59"), .utc, utc(2027, 1, 1), utc(2027, 1, 1, 23, 59))
        expectInterval(try window("23:59", "00:00"), .utc, utc(2027, 1, 1, 23, 59), utc(2027, 1, 2))
    }

    @Test("other zones' transition nights")
    func otherZones() throws {
        let night = try window("22:00", "07:30")
        let ny = try #require(database.zone(named: "America/New_York"))
        expectInterval(night, ny, utc(2027, 3, 14, 3), utc(2027, 3, 14, 11, 30))  // 8 h 30
        expectInterval(night, ny, utc(2027, 11, 7, 2), utc(2027, 11, 7, 12, 30))  // 10 h 30
        let lordHowe = try #require(database.zone(named: "Australia/Lord_Howe"))
        expectInterval(night, lordHowe, utc(2027, 10, 2, 11, 30), utc(2027, 10, 2, 20, 30))  // 9 h
        expectInterval(night, lordHowe, utc(2027, 4, 3, 11), utc(2027, 4, 3, 21))  // 10 h
        let kathmandu = try #require(database.zone(named: "Asia/Kathmandu"))
        expectInterval(night, kathmandu, utc(2027, 6, 1, 16, 15), utc(2027, 6, 2, 1, 45))
        let dublin = try #require(database.zone(named: "Europe/Dublin"))
        expectInterval(night, dublin, utc(2027, 3, 27, 22), utc(2027, 3, 28, 6, 30))  // GMT → IST: 8 h 30
        let gmtMinus3 = try #require(database.zone(named: "Etc/GMT-3"))
        expectInterval(night, gmtMinus3, utc(2027, 3, 27, 19), utc(2027, 3, 28, 4, 30))
    }

    @Test("Pacific/Apia: the window of 2011-12-29 ends at 07:30 on the 31st; the missing 30th has none of its own")
    func apia() throws {
        let apia = try #require(database.zone(named: "Pacific/Apia"))
        let night = try window("22:00", "07:30")
        // 22:00 on the 29th at −10 → 07:30 on the 31st at +14: 9 h 30.
        expectInterval(night, apia, utc(2011, 12, 30, 8), utc(2011, 12, 30, 17, 30))
        // The 31st's night as usual (+14).
        expectInterval(night, apia, utc(2011, 12, 31, 8), utc(2011, 12, 31, 17, 30))
        // A daytime window: the 30th's "09:00–17:00" resolves to the 31st's, no second interval.
        expectInterval(try window("09:00", "17:00"), apia, utc(2011, 12, 30, 19), utc(2011, 12, 31, 3))
    }
}
