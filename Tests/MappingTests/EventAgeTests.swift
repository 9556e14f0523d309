import Dates
import Mapping
import Testing

/// The pure parts of `max_age`: an event's age against an injected clock, and the RFC 3339
/// times event fields carry.
@Suite("EventAge and RFC 3339 parsing (pure)")
struct EventAgeTests {
    @Test("fresh up to and including max_age, with the seconds left rounded down; older is too old; the future is age 0")
    func judge() {
        let now: Int64 = 1_800_000_000_000
        #expect(EventAge.judge(eventTime: now, now: now, maxAgeSeconds: 600) == .fresh(remainingSeconds: 600))
        #expect(EventAge.judge(eventTime: now - 1, now: now, maxAgeSeconds: 600) == .fresh(remainingSeconds: 599))
        #expect(EventAge.judge(eventTime: now - 599_999, now: now, maxAgeSeconds: 600) == .fresh(remainingSeconds: 0))
        #expect(EventAge.judge(eventTime: now - 600_000, now: now, maxAgeSeconds: 600) == .fresh(remainingSeconds: 0))
        #expect(EventAge.judge(eventTime: now - 600_001, now: now, maxAgeSeconds: 600) == .tooOld(ageMilliseconds: 600_001))
        #expect(EventAge.judge(eventTime: now + 60_000, now: now, maxAgeSeconds: 600) == .fresh(remainingSeconds: 600))
        #expect(EventAge.judge(eventTime: 0, now: now, maxAgeSeconds: 600) == .tooOld(ageMilliseconds: now))
    }

    @Test("durations as mappings write them")
    func text() {
        #expect(EventAge.text(seconds: 0) == "0s")
        #expect(EventAge.text(seconds: 45) == "45s")
        #expect(EventAge.text(seconds: 601) == "10m1s")
        #expect(EventAge.text(seconds: 3600) == "1h")
        #expect(EventAge.text(seconds: 93_784) == "1d2h3m4s")
    }

    @Test(
        "RFC 3339 times with a zone",
        arguments: [
            ("2027-01-15T08:00:00Z", 1_800_000_000_000),
            ("2027-01-15t08:00:00z", 1_800_000_000_000),
            ("2027-01-15 08:00:00Z", 1_800_000_000_000),
            ("2027-01-15T08:00:00.5Z", 1_800_000_000_500),
            ("2027-01-15T08:00:00.123456789Z", 1_800_000_000_123),
            ("2027-01-15T09:30:00+01:30", 1_800_000_000_000),
            ("2027-01-15T03:00:00-05:00", 1_800_000_000_000),
            ("1970-01-01T00:00:00Z", 0),
            ("1969-12-31T23:59:59.999Z", -1),
            ("2024-02-29T00:00:00Z", 1_709_164_800_000),
            ("2016-12-31T23:59:60Z", 1_483_228_800_000),
        ] as [(String, Int64)])
    func parses(text: String, milliseconds: Int64) {
        #expect(RFC3339.parseMilliseconds(text) == milliseconds)
    }

    @Test(
        "not RFC 3339 date-times: no zone, impossible dates, other shapes",
        arguments: [
            "2027-01-15T08:00:00", "2027-01-15", "2027-01-15T08:00Z", "2023-02-29T00:00:00Z", "2027-13-01T00:00:00Z",
            "2027-04-31T00:00:00Z", "2027-01-15T24:00:00Z", "2027-01-15T08:60:00Z", "2027-01-15T08:00:00.Z",
            "2027-01-15T08:00:00+0100", "2027-01-15T08:00:00Z ", " 2027-01-15T08:00:00Z", "27-01-15T08:00:00Z", "",
            "２０２７-01-15T08:00:00Z",
        ])
    func refuses(text: String) {
        #expect(RFC3339.parseMilliseconds(text) == nil)
    }

    @Test("reads back what format writes, across eras")
    func roundTrip() {
        for ms: Int64 in [0, 1, -1, 951_782_400_000, 4_107_542_400_123, -2_208_988_800_000, 253_402_300_799_999] {
            #expect(RFC3339.parseMilliseconds(RFC3339.format(milliseconds: ms)) == ms, "\(ms)")
        }
    }
}
