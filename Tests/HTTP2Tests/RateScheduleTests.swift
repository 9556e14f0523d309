import Testing

@testable import HTTP2

@Suite("RateSchedule: a rate cap that never bursts above itself, without I/O")
struct RateScheduleTests {
    let t0 = ContinuousClock.now

    static func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }

    /// Asks made at once in bursts, separated by quiet spells and trickles.
    func asks() -> [ContinuousClock.Instant] {
        var asks: [ContinuousClock.Instant] = []
        asks += Array(repeating: t0, count: 1_000)  // a backlog all at once
        asks += (0..<200).map { t0 + .seconds(20) + .milliseconds($0 * 50) }  // a trickle below the cap
        asks += Array(repeating: t0 + .seconds(40), count: 500)  // after a quiet spell, a burst
        return asks
    }

    @Test("over every window, no more starts than the rate allows plus 20 ms worth", arguments: [100.0, 2_000.0, 10_000.0])
    func windows(rate: Double) {
        var schedule = RateSchedule(perSecond: rate)
        var starts: [ContinuousClock.Instant] = []
        for ask in asks() {
            let start = schedule.start(askedAt: ask)
            #expect(start >= ask, "a request never starts before it asks")
            starts.append(start)
        }
        starts.sort()
        let burstSends = max(1, Int(rate * 0.02))
        for window in [Duration.milliseconds(100), .seconds(1), .seconds(60)] {
            let allowed = Int((Self.seconds(window) * rate).rounded(.up)) + burstSends
            var j = 0
            for (i, s) in starts.enumerated() {
                while j < starts.count, starts[j] < s + window { j += 1 }
                #expect(j - i <= allowed, "\(j - i) starts in \(window) from \(Self.seconds(s - t0)) s at \(rate)/s; at most \(allowed)")
                if j - i > allowed { return }
            }
        }
    }

    @Test("a backlog goes out at the rate, not slower")
    func backlogAtRate() {
        var schedule = RateSchedule(perSecond: 500)
        let starts = (0..<1_000).map { _ in schedule.start(askedAt: t0) }
        let span = Self.seconds(starts.last! - starts.first!)
        #expect(abs(span - 999.0 / 500) < 0.001, "1,000 sends spread over \(span) s at 500/s")
    }

    @Test("peek tells the next start without taking it")
    func peekReservesNothing() {
        var schedule = RateSchedule(perSecond: 100)
        #expect(schedule.peek(askedAt: t0) == t0)
        #expect(schedule.start(askedAt: t0) == t0)
        let next = schedule.peek(askedAt: t0)
        #expect(next == t0 + .milliseconds(10))
        #expect(schedule.peek(askedAt: t0) == next, "peeking twice gives the same start")
        #expect(schedule.start(askedAt: t0) == next)
        // Past the slot, a request that asks goes at once.
        #expect(schedule.peek(askedAt: t0 + .seconds(1)) == t0 + .seconds(1))
    }
}
