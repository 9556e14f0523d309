/// When to try a failed send again: exponential backoff with full jitter, bounded by a time
/// budget, always honouring `Retry-After`.
///
/// Transient failures (5xx, UNAVAILABLE, connection loss, timeouts, quotas) are retried for as
/// long as the budget allows, not a fixed number of times: a good push must outlive an FCM
/// outage. The client counts against the budget only the time FCM was answering (see
/// ``FCMAvailability``), so an outage holds events instead of dead-lettering them.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included; nil (the default): as many as the budget allows.
    public var maxAttempts: Int?
    /// The backoff ceiling for the first retry. Default 200 ms.
    public var initialBackoff: Duration = .milliseconds(200)
    /// The largest backoff ceiling. Default 30 s.
    public var maxBackoff: Duration = .seconds(30)
    /// No retry is scheduled past this much time counted against it since the first attempt.
    /// Default 5 min.
    public var budget: Duration = .seconds(300)
    /// How long the project's QUOTA_EXCEEDED pauses all sending, and a topic's its topic, at
    /// least. Default 60 s (FCM's ErrorCode reference: "a minimum initial delay of 1 minute").
    public var quotaPause: Duration = .seconds(60)

    public init() {}

    /// The delay before attempt `attempt + 1`, or nil to give up.
    ///
    /// - Parameters:
    ///   - attempt: attempts made so far (≥ 1); for a throttled target, its strikes.
    ///   - elapsed: time counted against the budget since the first attempt.
    ///   - error: the failure; its `retryAfter` is a floor on the delay, and the project's and a
    ///     topic's quota wait at least ``quotaPause``.
    ///   - random: a number in `0...1` (injected, so tests are deterministic).
    public func delay(afterAttempt attempt: Int, elapsed: Duration, error: FCMError, random: Double) -> Duration? {
        guard error.isRetryable else { return nil }
        if let maxAttempts, attempt >= maxAttempts { return nil }
        var delay: Duration
        if error.kind == .auth {
            delay = .zero  // refresh the token and go again at once
        } else {
            delay = backoffCeiling(afterAttempt: attempt) * max(0, min(1, random))  // full jitter
        }
        if error.kind == .quota, error.quotaScope != .device { delay = max(delay, quotaPause) }
        if let retryAfter = error.retryAfter { delay = max(delay, retryAfter) }
        guard elapsed + delay <= budget else { return nil }
        return delay
    }

    /// The jitter's ceiling after `attempt` attempts: `initialBackoff` doubling, at most `maxBackoff`.
    public func backoffCeiling(afterAttempt attempt: Int) -> Duration {
        min(maxBackoff, initialBackoff * (1 << min(max(attempt, 1) - 1, 30)))
    }
}
