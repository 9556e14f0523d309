/// The delay levels of the timer topic (issue 56 design §2.1 (c)): level k holds a record
/// exactly 2^k s (k = 0 ..< ``levels``, 1 s … 36.4 h with 18). A timer whose remaining time is R
/// goes to level min(top, ⌊log2 R s⌋); at its release it goes on with what is left, recomputed
/// from its due time and the clock (so a late release shortens the next hop, never delays the
/// fire), or, under a second, waits in memory for its due time. All records of one level wait
/// the same time, so each level partition is FIFO in release time and its consumer waits for its
/// head only. Without lateness a timer makes popcount(R in whole seconds) hops (one per 1-bit;
/// plus a top-level hop per 2^17 s beyond). Pure; the levels and the < 1 s rule live here only.
public struct TimerLadder: Sendable, Equatable {
    /// The number of levels (`timers.levels`, 18): the top level holds 2^(levels−1) s.
    public let levels: Int

    /// What to do with a timer at an instant.
    public enum Step: Sendable, Equatable {
        /// Due: render and send it now.
        case fire
        /// Under a second left: hold it in memory until `until` (its due time), then fire.
        case wait(until: Int64)
        /// Write it to `level`, which lets it go at `release` (now + 2^level s).
        case forward(level: Int, release: Int64)
    }

    /// - Precondition: 1 ... 31 levels (2^30 s is 34 years).
    public init(levels: Int = 18) {
        precondition((1...31).contains(levels), "timer levels must be 1 ... 31")
        self.levels = levels
    }

    /// How long `level` holds a record, in milliseconds.
    public func holdMilliseconds(level: Int) -> Int64 { 1000 << Int64(level) }

    /// The level for a remaining time (milliseconds), or nil under a second (waited in memory).
    public func level(remainingMilliseconds remaining: Int64) -> Int? {
        guard remaining >= 1000 else { return nil }
        let seconds = UInt64(remaining / 1000)
        return min(levels - 1, 63 - seconds.leadingZeroBitCount)
    }

    /// The step for a timer due at `due`, at `now` (both milliseconds since the epoch).
    public func next(due: Int64, now: Int64) -> Step {
        let remaining = due - now
        guard remaining > 0 else { return .fire }
        guard let level = level(remainingMilliseconds: remaining) else { return .wait(until: due) }
        return .forward(level: level, release: now + holdMilliseconds(level: level))
    }

    /// When a record read from a level is taken up again: its release, or its due time when less
    /// than a second would be left at the release (it waits in memory for the due time, not a
    /// second in another level) or when it is due before it (never fired late).
    public func wake(due: Int64, release: Int64) -> Int64 { due - release < 1000 ? due : release }

    /// The levels a timer visits from `now` to `due` when each release is handled on time: the
    /// hop sequence (its count is the writes a timer costs).
    public func hops(due: Int64, from now: Int64) -> [Int] {
        var levels: [Int] = []
        var t = now
        while case .forward(let level, let release) = next(due: due, now: t) {
            levels.append(level)
            t = release
        }
        return levels
    }
}
