import Testing

@testable import FCM

/// The sends-in-flight limit, driven by simulated answers: a closed loop of `limit` sends whose
/// answers come after `answerTime`, optionally capped by what the machine can do (`capacity`
/// per second). No I/O and no clock: instants are computed.
@Suite("ConcurrencyLimit: sends in flight follow answer times (Little's law), without I/O")
struct ConcurrencyLimitTests {
    /// The defaults with a floor of 100, far below what these answer times need, so that the
    /// estimate's dynamics show (the worker's floor, 1,000, is one operating choice on top).
    static let dynamics: ConcurrencyLimit.Parameters = {
        var p = ConcurrencyLimit.Parameters()
        p.floor = 100
        return p
    }()

    let t0 = ContinuousClock.now

    /// Runs `seconds` of simulated traffic; returns the limit at the end.
    func simulate(
        _ limit: inout ConcurrencyLimit, answerTime: Duration, capacity: Double? = nil, seconds: Int, from start: ContinuousClock.Instant,
        each: (Int) -> Void = { _ in }
    ) -> ContinuousClock.Instant {
        simulate(&limit, answerTime: { _ in answerTime }, capacity: capacity, seconds: seconds, from: start, each: each)
    }

    /// The same, with an answer time that depends on the sends in flight; `each` sees the limit
    /// after every 10 ms.
    func simulate(
        _ limit: inout ConcurrencyLimit, answerTime answerTimeFor: (Int) -> Duration, capacity: Double? = nil, seconds: Int,
        from start: ContinuousClock.Instant, each: (Int) -> Void = { _ in }
    ) -> ContinuousClock.Instant {
        var now = start
        let step = Duration.milliseconds(10)
        var carry = 0.0
        for _ in 0..<(seconds * 100) {
            let answerTime = answerTimeFor(limit.limit)
            // In each 10 ms, the sends in flight complete at `limit / answerTime` a second,
            // unless the capacity holds them back (they then wait for a stream on our side,
            // which the measured answer time leaves out: it runs from the request going out).
            let offered = Double(limit.limit) / (Double(answerTime.components.attoseconds) / 1e18 + Double(answerTime.components.seconds))
            let rate = min(offered, capacity ?? .infinity)
            carry += rate * 0.01
            let completions = Int(carry)
            carry -= Double(completions)
            for _ in 0..<completions { limit.completed(answerTime: answerTime, at: now) }
            now += step
            limit.advance(to: now)
            each(limit.limit)
        }
        return now
    }

    /// How many times the limit fell to half or less of what it was just before: the halvings.
    struct Halvings {
        var count = 0
        private var last: Int?
        mutating func see(_ limit: Int) {
            if let last, limit * 2 <= last + 1 { count += 1 }
            last = limit
        }
    }

    @Test("from the floor, the limit grows until it carries rate × answer time, at 20, 100 and 300 ms", arguments: [20, 100, 300])
    func growsToLittlesLaw(ms: Int) {
        var limit = ConcurrencyLimit(Self.dynamics, now: t0)
        #expect(limit.limit == 100)
        // The machine can do 14,000 sends a second: what the limit must allow at each answer time.
        _ = simulate(&limit, answerTime: .milliseconds(ms), capacity: 14_000, seconds: 20, from: t0)
        let needed = 14_000 * ms / 1000
        #expect(limit.limit >= needed, "\(limit.limit) in flight allowed; \(needed) needed at \(ms) ms")
        #expect(limit.limit <= Int(Double(needed) * 1.5) + 100 + 1, "\(limit.limit): no more than the gain above what is needed")
    }

    @Test("the ceiling bounds it however slow the answers")
    func ceiling() {
        var p = Self.dynamics
        p.ceiling = 2_000
        var limit = ConcurrencyLimit(p, now: t0)
        _ = simulate(&limit, answerTime: .seconds(2), seconds: 30, from: t0)
        #expect(limit.limit == 2_000)
    }

    @Test("a rate cap holds the estimate: rate × answer time, not the ceiling")
    func capped() {
        var limit = ConcurrencyLimit(Self.dynamics, now: t0)
        _ = simulate(&limit, answerTime: .milliseconds(100), capacity: 1_000, seconds: 20, from: t0)
        #expect(limit.limit >= 100 && limit.limit <= 1_000 / 10 * 2 + 100, "\(limit.limit)")
    }

    /// A worker short of CPU: sends beyond what it can process wait in the socket buffers and the
    /// server's queue, so the answer time measured is 100 ms plus that queue's wait, and it grows
    /// with the limit, and no answer comes near the shortest known, so the limit is halved every
    /// 8 s. Without that, each estimate would be 1.5 × the last, up to the ceiling (memory for
    /// nothing: the rate cannot grow).
    @Test("when the worker is the bottleneck, the answer times its own queue adds do not inflate the limit to the ceiling")
    func queueingDoesNotFeedItself() {
        var limit = ConcurrencyLimit(Self.dynamics, now: t0)
        let capacity = 8_000.0
        let base = 0.1
        var highest = 0
        var now = t0
        for _ in 0..<6 {
            now = simulate(
                &limit,
                answerTime: { inFlight in
                    let queued = max(0, Double(inFlight) - capacity * base)
                    return .milliseconds(Int((base + queued / capacity) * 1000))
                }, capacity: capacity, seconds: 10, from: now)
            highest = max(highest, limit.limit)
        }
        let needed = Int(capacity * base)
        #expect(limit.limit >= needed && highest <= needed * 2 + 100, "limit \(limit.limit), at most \(highest); \(needed) carry the rate")
    }

    /// At 300 ms with no queue of ours, every answer comes at the shortest known: a halving would
    /// measure nothing new, and it would cost the rate of two answer times at half the sends.
    @Test("answers that keep coming near the shortest known leave the limit whole: no halving at 300 ms")
    func noHalvingWithoutQueue() {
        var limit = ConcurrencyLimit(Self.dynamics, now: t0)
        var halvings = Halvings()
        let now = simulate(&limit, answerTime: .milliseconds(300), capacity: 14_000, seconds: 10, from: t0)
        #expect(limit.limit == Self.dynamics.ceiling)
        _ = simulate(&limit, answerTime: .milliseconds(300), capacity: 14_000, seconds: 30, from: now) { halvings.see($0) }
        #expect(halvings.count == 0, "halved \(halvings.count) times in 30 s")
        #expect(limit.limit == Self.dynamics.ceiling)
    }

    /// FCM answering slower for good is not our queue: one halving measures the new answer time,
    /// which becomes the baseline, and answers near it need no more.
    @Test("answers that slow down for good are measured by one halving, which sets the new baseline")
    func slowerForGoodHalvesOnce() {
        var limit = ConcurrencyLimit(Self.dynamics, now: t0)
        let now = simulate(&limit, answerTime: .milliseconds(50), capacity: 10_000, seconds: 15, from: t0)
        var halvings = Halvings()
        _ = simulate(&limit, answerTime: .milliseconds(100), capacity: 10_000, seconds: 30, from: now) { halvings.see($0) }
        #expect(halvings.count == 1, "halved \(halvings.count) times in 30 s")
        // 10,000/s at 100 ms: 1,000 carry it, the gain and the floor allow more, never the ceiling.
        #expect(limit.limit >= 1_000 && limit.limit <= 1_000 * 3 / 2 + 100 + 1, "\(limit.limit)")
    }

    @Test("when answers slow down for good, the limit follows within the answer window; idle, it falls back to the floor")
    func followsAndRests() {
        var limit = ConcurrencyLimit(Self.dynamics, now: t0)
        var now = simulate(&limit, answerTime: .milliseconds(20), capacity: 10_000, seconds: 15, from: t0)
        let fast = limit.limit
        now = simulate(&limit, answerTime: .milliseconds(200), capacity: 10_000, seconds: 15, from: now)
        #expect(limit.limit > fast * 5, "\(fast) → \(limit.limit)")
        limit.advance(to: now + .seconds(30))
        #expect(limit.limit == 100)
    }
}
