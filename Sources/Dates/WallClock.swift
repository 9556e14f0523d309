/// The wall clock, in milliseconds since the Unix epoch: what decides an event's age
/// (`max_age`), `apns-expiration`, a user's quiet hours and, for deferred delivery, when a
/// timer is due. The worker takes it as a port so a test can run a process on another clock
/// (``TestClock``, debug builds only); in production it is ``SystemWallClock``.
public protocol WallClock: Sendable {
    /// Milliseconds since the Unix epoch, now.
    func nowMilliseconds() -> Int64
}

/// The operating system's real-time clock (`CLOCK_REALTIME` through Foundation's `Date`).
public struct SystemWallClock: WallClock {
    public init() {}

    @inlinable
    public func nowMilliseconds() -> Int64 { RFC3339.nowMilliseconds() }
}
