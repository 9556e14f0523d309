import Pipeline
import TestSupport
import Testing

/// The delay levels (``TimerLadder``), without I/O: level choice, the last second in memory,
/// hop counts against issue 56 design §2.1's simulated figures, and never early.
@Suite("Timer ladder: delay levels 2^k s")
struct TimerLadderTests {
    let ladder = TimerLadder()

    @Test("the level of a remaining time is ⌊log2 s⌋ at each power of two ± 1 ms, capped at the top level")
    func levels() {
        #expect(ladder.level(remainingMilliseconds: 999) == nil)
        #expect(ladder.level(remainingMilliseconds: 0) == nil)
        #expect(ladder.level(remainingMilliseconds: -5) == nil)
        for k in 0..<18 {
            let power = Int64(1000) << Int64(k)
            #expect(ladder.level(remainingMilliseconds: power) == k, "2^\(k) s")
            #expect(ladder.level(remainingMilliseconds: power + 1) == k, "2^\(k) s + 1 ms")
            if k > 0 { #expect(ladder.level(remainingMilliseconds: power - 1) == k - 1, "2^\(k) s − 1 ms") }
        }
        #expect(ladder.level(remainingMilliseconds: Int64(1000) << 18) == 17, "the top level repeats")
        #expect(ladder.level(remainingMilliseconds: 30 * 86_400_000) == 17)
        #expect(ladder.level(remainingMilliseconds: .max) == 17)
        #expect(ladder.holdMilliseconds(level: 17) == 131_072_000, "36.4 h")
        #expect(TimerLadder(levels: 4).level(remainingMilliseconds: 3_600_000) == 3)
    }

    @Test("wake: a record is taken up at its release, or at its due time when under a second would be left then, or when due first")
    func wake() {
        #expect(ladder.wake(due: 10_000, release: 9_000) == 9_000, "a second left: released, then fired")
        #expect(ladder.wake(due: 10_000, release: 9_001) == 10_000, "under a second: waited in memory to the due time")
        #expect(ladder.wake(due: 10_000, release: 12_000) == 10_000, "due before its release: never late")
        #expect(ladder.wake(due: 100_000, release: 36_000) == 36_000)
    }

    @Test("next: fire when due or past, wait in memory under a second, else forward to the level of what is left")
    func next() {
        let now: Int64 = 1_800_000_000_000
        #expect(ladder.next(due: now, now: now) == .fire)
        #expect(ladder.next(due: now - 60_000, now: now) == .fire)
        #expect(ladder.next(due: now + 1, now: now) == .wait(until: now + 1))
        #expect(ladder.next(due: now + 999, now: now) == .wait(until: now + 999))
        #expect(ladder.next(due: now + 1000, now: now) == .forward(level: 0, release: now + 1000))
        #expect(ladder.next(due: now + 600_000, now: now) == .forward(level: 9, release: now + 512_000))
    }

    @Test("hops are the 1-bits of the delay in seconds: 10 and 30 minutes take 4, 5 hours 5 (levels high to low)")
    func hopSequences() {
        #expect(ladder.hops(due: 600_000, from: 0) == [9, 6, 4, 3])
        #expect(ladder.hops(due: 1_800_000, from: 0) == [10, 9, 8, 3])
        #expect(ladder.hops(due: 18_000_000, from: 0) == [14, 10, 9, 6, 4], "00:30Z to 05:30Z")
        #expect(ladder.hops(due: 999, from: 0) == [])
        #expect(ladder.hops(due: 7 * 86_400_000, from: 0).prefix(4) == [17, 17, 17, 17], "a week: the top level 4 times, then the rest")
        for seconds: Int64 in [1, 2, 3, 1000, 65_535, 131_071, 262_143] {
            #expect(ladder.hops(due: seconds * 1000 + 123, from: 0).count == seconds.nonzeroBitCount, "\(seconds) s")
        }
    }

    /// Issue 56 design §2.1 simulated 200,000 delays per row with python; the same here, seeded.
    @Test("mean hops match the design's simulation: 7.7 for 1 s–14 h, 8.1 for 6–10 h, 10.6 for 1–7 days")
    func meanHops() {
        var rng = SplitMix64(seed: 56)
        func mean(_ range: ClosedRange<Int64>) -> (mean: Double, max: Int) {
            var (sum, most) = (0, 0)
            for _ in 0..<20_000 {
                let n = ladder.hops(due: Int64.random(in: range, using: &rng), from: 0).count
                (sum, most) = (sum + n, max(most, n))
            }
            return (Double(sum) / 20_000, most)
        }
        let hour: Int64 = 3_600_000
        let uniform = mean(1000...14 * hour)
        #expect(abs(uniform.mean - 7.7) < 0.1 && uniform.max <= 15, "\(uniform)")
        let night = mean(6 * hour...10 * hour)
        #expect(abs(night.mean - 8.1) < 0.1 && night.max <= 15, "\(night)")
        let week = mean(24 * hour...7 * 24 * hour)
        #expect(abs(week.mean - 10.6) < 0.1 && week.max <= 19, "\(week)")
    }

    /// Each hop is handled 0–3 s late (a busy worker, a slow fetch): a late release shortens the
    /// next hop, so the timer still fires at its due time or later, never earlier, and each
    /// level below the top is visited at most once.
    @Test("with random lateness at every hop: never fired before due, hops ≤ top-level repeats + 17")
    func lateness() {
        var rng = SplitMix64(seed: 5_600)
        for _ in 0..<2_000 {
            let now = Int64.random(in: 0...1_000_000_000_000, using: &rng)
            let delay = Int64.random(in: 0...(10 * 86_400_000), using: &rng)
            let due = now + delay
            var (t, hops, fired) = (now, 0, Int64?.none)
            while fired == nil {
                switch ladder.next(due: due, now: t) {
                case .fire: fired = t
                case .wait(let until):
                    #expect(until == due)
                    t = until + Int64.random(in: 0...50, using: &rng)
                case .forward(let level, let release):
                    #expect(release - t == ladder.holdMilliseconds(level: level))
                    #expect(release <= due, "a hop never passes the due time")
                    hops += 1
                    t = release + Int64.random(in: 0...3_000, using: &rng)
                }
            }
            #expect(fired! >= due)
            let topRepeats = Int(delay / ladder.holdMilliseconds(level: 17))
            #expect(hops <= topRepeats + 17, "\(delay) ms: \(hops) hops")
        }
    }
}
