/// When to try a failed send again: exponential backoff with full jitter, bounded by a number of
/// attempts and a time budget, always honouring `Retry-After`.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included. Default 8.
    public var maxAttempts: Int = 8
    /// The backoff ceiling for the first retry. Default 200 ms.
    public var initialBackoff: Duration = .milliseconds(200)
    /// The largest backoff ceiling. Default 30 s.
    public var maxBackoff: Duration = .seconds(30)
    /// No retry is scheduled to start later than this after the first attempt. Default 5 min.
    public var budget: Duration = .seconds(300)
    /// How long QUOTA_EXCEEDED pauses all sending for the project, at least. Default 60 s.
    public var quotaPause: Duration = .seconds(60)

    public init() {}

    /// The delay before attempt `attempt + 1`, or nil to give up.
    ///
    /// - Parameters:
    ///   - attempt: attempts made so far (≥ 1).
    ///   - elapsed: time since the first attempt started.
    ///   - error: the failure; its `retryAfter` is a floor on the delay, and quota errors wait at
    ///     least ``quotaPause``.
    ///   - random: a number in `0...1` (injected, so tests are deterministic).
    public func delay(afterAttempt attempt: Int, elapsed: Duration, error: FCMError, random: Double) -> Duration? {
        guard error.isRetryable, attempt < maxAttempts else { return nil }
        var delay: Duration
        if error.kind == .auth {
            delay = .zero  // refresh the token and go again at once
        } else {
            let exponent = min(attempt - 1, 30)
            let ceiling = min(maxBackoff, initialBackoff * (1 << exponent))
            delay = ceiling * max(0, min(1, random))  // full jitter
        }
        if error.kind == .quota { delay = max(delay, quotaPause) }
        if let retryAfter = error.retryAfter { delay = max(delay, retryAfter) }
        guard elapsed + delay <= budget else { return nil }
        return delay
    }
}
