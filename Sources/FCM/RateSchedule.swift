/// When each send may start under a rate cap (`fcm.max_sends_per_second`): evenly spaced at
/// `1 / rate`, and after a quiet spell at most `burst` worth at once (GCRA, the generic cell
/// rate algorithm). So over any window of length `T`, at most `(T + burst) × rate` sends start:
/// a cap that never bursts above itself into FCM's per-minute quota. Pure: instants in, start
/// instants out; ``SendGate`` keeps one under its lock.
struct RateSchedule: Sendable {
    let sendsPerSecond: Double
    /// Between two starts.
    let interval: Duration
    /// How much of the rate may start at once after a quiet spell: 20 ms worth, at least one send.
    let burst: Duration
    /// The theoretical start of the next send.
    private var nextStart: ContinuousClock.Instant?

    init(sendsPerSecond: Double) {
        self.sendsPerSecond = sendsPerSecond
        interval = .nanoseconds(Int64(1e9 / sendsPerSecond))
        burst = max(.milliseconds(20), interval)
    }

    /// The start of a send that asks at `now` (not before `now`).
    mutating func start(askedAt now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        let start = max(nextStart ?? now, now - burst + interval)
        nextStart = start + interval
        return max(start, now)
    }
}
