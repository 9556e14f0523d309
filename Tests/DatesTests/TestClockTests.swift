import Dates
import Testing

@Suite("TestClock: a virtual wall clock anchored to the real one (PUSHBRIDGE_TEST_CLOCK)")
struct TestClockTests {
    @Test("virtual = V0 + rate × (real − R0) + skew")
    func arithmetic() {
        let clock = TestClock(virtualStart: 1_000_000, realAnchor: 500, rate: 600, skewMilliseconds: -7)
        #expect(clock.virtual(atReal: 500) == 999_993)
        #expect(clock.virtual(atReal: 1500) == 1_000_000 + 600_000 - 7)
        let fixed = TestClock(virtualStart: 42, realAnchor: 0, real: { 10 })
        #expect(fixed.nowMilliseconds() == 52, "rate 1 by default")
    }

    @Test("a wait for a virtual instant lasts the virtual difference over the rate, rounded up; none once it passed")
    func realDuration() {
        let clock = TestClock(virtualStart: 1_000, realAnchor: 0, rate: 600, real: { 0 })
        #expect(clock.realDuration(untilMilliseconds: 61_000) == .milliseconds(100))
        #expect(clock.realDuration(untilMilliseconds: 1_001) == .milliseconds(1), "under a real millisecond: one")
        #expect(clock.realDuration(untilMilliseconds: 500) == .zero)
        let real = TestClock(virtualStart: 1_000, realAnchor: 0, real: { 0 })
        #expect(real.realDuration(untilMilliseconds: 3_500) == .milliseconds(2_500))
    }

    @Test("parses every member; real defaults to the moment of parsing")
    func parsing() throws {
        let full = try TestClock(parsing: "virtual=2027-03-27T21:00:00Z, real=1795000000000,rate=600,skew_ms=-250")
        #expect(full == TestClock(virtualStart: 1_806_181_200_000, realAnchor: 1_795_000_000_000, rate: 600, skewMilliseconds: -250))
        let short = try TestClock(parsing: "virtual=1806181200000", realNow: 99)
        #expect(short == TestClock(virtualStart: 1_806_181_200_000, realAnchor: 99))
    }

    @Test(
        "refuses what it cannot read, naming it",
        arguments: [
            ("", "is not name=value"), ("rate=2", "virtual is required"), ("virtual=soon", "virtual must be"),
            ("virtual=0,rate=0", "rate must be a number > 0"), ("virtual=0,rate=nan", "rate must be"), ("virtual=0,real=now", "real must be"),
            ("virtual=0,skew_ms=1.5", "skew_ms must be"), ("virtual=0,speed=2", "unknown member \"speed\""),
            ("virtual=0,virtual=1", "virtual is given twice"), ("virtual=", "is not name=value"),
        ])
    func refusals(spec: String, message: String) {
        #expect {
            try TestClock(parsing: spec)
        } throws: { error in
            "\(error)".contains(message)
        }
    }

    @Test("the system clock is Foundation's, to the millisecond")
    func system() {
        let before = RFC3339.nowMilliseconds()
        let now = SystemWallClock().nowMilliseconds()
        #expect(now >= before && now - before < 1000)
    }
}
