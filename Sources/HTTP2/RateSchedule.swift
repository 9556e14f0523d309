/// When each paced request may go under a rate cap (`fcm.max_sends_per_second`): evenly spaced
/// at `1 / rate`, and after a quiet spell at most `burst` worth at once (GCRA, the generic cell
/// rate algorithm). So over any window of length `T`, at most `(T + burst) × rate` go: a cap
/// that never bursts above itself into FCM's per-minute quota. Pure: instants in, start
/// instants out; ``RequestPacer`` keeps one under its lock.
struct RateSchedule: Sendable {
    let perSecond: Double
    /// Between two starts.
    let interval: Duration
    /// How much of the rate may start at once after a quiet spell: 20 ms worth, at least one.
    let burst: Duration
    /// The theoretical start of the next request.
    private var nextStart: ContinuousClock.Instant?

    init(perSecond: Double) {
        self.perSecond = perSecond
        interval = .nanoseconds(Int64(1e9 / perSecond))
        burst = max(.milliseconds(20), interval)
    }

    /// The start of a request that asks at `now` (not before `now`), reserved for it.
    mutating func start(askedAt now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        let start = earliest(now)
        nextStart = start + interval
        return max(start, now)
    }

    /// The start ``start(askedAt:)`` would give at `now`, reserving nothing.
    func peek(askedAt now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        max(earliest(now), now)
    }

    private func earliest(_ now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        max(nextStart ?? now, now - burst + interval)
    }
}
