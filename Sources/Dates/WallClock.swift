/// The wall clock, in milliseconds since the Unix epoch: what decides an event's age
/// (`max_age`), `apns-expiration`, a user's quiet hours and, for deferred delivery, when a
/// timer is due. The worker takes it as a port so a test can run a process on another clock
/// (``TestClock``, debug builds only); in production it is ``SystemWallClock``.
public protocol WallClock: Sendable {
    /// Milliseconds since the Unix epoch, now.
    func nowMilliseconds() -> Int64
    /// How long a task sleeps (on the real, monotonic clock) until this clock reads `target`
    /// (zero when it has already passed): a timer engine's wait for its next release.
    func realDuration(untilMilliseconds target: Int64) -> Duration
}

extension WallClock {
    /// A clock that runs at the real rate: the difference, in real milliseconds.
    public func realDuration(untilMilliseconds target: Int64) -> Duration {
        .milliseconds(max(0, target - nowMilliseconds()))
    }
}

/// The operating system's real-time clock (`CLOCK_REALTIME` through Foundation's `Date`).
public struct SystemWallClock: WallClock {
    public init() {}

    @inlinable
    public func nowMilliseconds() -> Int64 { RFC3339.nowMilliseconds() }
}
