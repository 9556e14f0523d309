/// Whether ``CurlMultiLoop`` corks its sockets, and when it flushes what they hold. Pure.
///
/// libcurl 7.88 writes each HTTP/2 frame as a TLS record and a `send` of its own (a request's
/// HEADERS, then its DATA; each WINDOW_UPDATE), so with `TCP_NODELAY`, libcurl's default, every
/// frame leaves as a TCP segment of its own, and the receiver wakes up for each. Corked
/// (`TCP_CORK`), a socket keeps what libcurl writes until a full segment is ready or it is
/// flushed: the frames of every transfer the loop ran in the last few milliseconds leave
/// together. A frame waits at most ``hold``, counted from the start of the libcurl calls that
/// made the first write not yet flushed, or until those calls end when they take longer.
///
/// The hold follows the answer time: a tenth of a moving average of the answers' times, at most
/// `maxHold`. Each request's time grows by at most a tenth, and the sends in flight follow
/// answer times (FCM's `ConcurrencyLimit`), so long answers lose no rate to it. Short answers
/// are not held at all: there a fixed hold multiplied a request's time and cost a connection
/// with its streams full much of its rate. Nagle's algorithm (`TCP_NODELAY` off) saves as much
/// CPU but holds requests for the server's delayed acknowledgment. What the hold saves, and the
/// alternatives measured: docs/benchmarks-history.md, "Coalesced writes".
struct WriteFlushSchedule: Sendable {
    /// The longest hold; `.zero`: never corked.
    let maxHold: Duration
    /// The moving average of answer times: each answer weighs ``answerWeight``.
    private(set) var answerTime: Duration?
    /// Whether the sockets are corked now.
    private(set) var corks = false
    /// Since when writes have waited, if any may.
    private(set) var pendingSince: ContinuousClock.Instant?

    static let answerWeight = 1.0 / 16
    /// Corked from answers of ten times this on (50 ms), and uncorked again below half of that.
    static let shortestHold: Duration = .milliseconds(5)

    init(maxHold: Duration) {
        self.maxHold = max(maxHold, .zero)
    }

    /// How long a written frame may wait for others now.
    var hold: Duration {
        guard corks, let answerTime else { return .zero }
        return min(maxHold, answerTime / 10)
    }

    /// A transfer was answered after `time`. Returns whether ``corks`` changed, so that the
    /// sockets must be corked or uncorked (uncorking sends what they hold).
    mutating func answered(after time: Duration) -> Bool {
        guard maxHold > .zero else { return false }
        let average = answerTime.map { $0 + (time - $0) * Self.answerWeight } ?? time
        answerTime = average
        // Against the answer time itself, so that a longest hold under 5 ms still corks.
        let tenth = average / 10
        let corks = self.corks ? tenth >= Self.shortestHold / 2 : tenth >= Self.shortestHold
        guard corks != self.corks else { return false }
        self.corks = corks
        if !corks { pendingSince = nil }
        return true
    }

    /// libcurl began to run at `now` (and may have written since). The loop passes the start
    /// of its libcurl calls, not their end: a busy turn takes long, and counted from its end,
    /// its writes would wait for the end of the next turn as well.
    mutating func wrote(at now: ContinuousClock.Instant) {
        guard corks, pendingSince == nil else { return }
        pendingSince = now
    }

    /// How long the loop may wait at `now` before it must flush: nil if nothing waits.
    func timeLeft(at now: ContinuousClock.Instant) -> Duration? {
        guard let since = pendingSince else { return nil }
        return max(since + hold - now, .zero)
    }

    /// Whether the writes waiting must go now.
    func isDue(at now: ContinuousClock.Instant) -> Bool { timeLeft(at: now) == .zero }

    /// The sockets were flushed.
    mutating func flushed() { pendingSince = nil }
}
