/// When ``CurlMultiLoop`` flushes the writes its corked sockets hold. Pure.
///
/// libcurl 7.88 writes each HTTP/2 frame as a TLS record and a `send` of its own (a request's
/// HEADERS, then its DATA; each WINDOW_UPDATE), so with `TCP_NODELAY`, libcurl's default, every
/// frame leaves as a TCP segment of its own, and the receiver wakes up for each. Corked
/// (`TCP_CORK`), a socket keeps what libcurl writes until a full segment is ready or it is
/// flushed: the frames of every transfer the loop ran in the last few milliseconds leave
/// together. A frame waits at most ``hold`` (plus the loop's turn), counted from the first
/// write not yet flushed; `.zero` sends each at once, as libcurl alone would.
///
/// Measured on 2026-11-27 (docs/benchmarks.md, "Coalesced writes"): 10 ms cut the worker's CPU
/// per event at 2,000 events/s by 9–19% (0 ms answers) and 2–23% (300 ms), and the stub
/// server's by about a quarter, with p99 produce→ack at 2,000/s within the runs' spread.
/// Nagle's algorithm (`TCP_NODELAY` off) saved as much but held requests for the server's
/// delayed acknowledgment: 30–50 ms more p99.
struct WriteFlushSchedule: Sendable {
    /// How long a written frame may wait for others.
    let hold: Duration
    /// Since when writes have waited, if any may.
    private(set) var pendingSince: ContinuousClock.Instant?

    init(hold: Duration) {
        self.hold = max(hold, .zero)
    }

    /// Whether sockets are corked at all.
    var isOn: Bool { hold > .zero }

    /// libcurl ran at `now` (and may have written).
    mutating func wrote(at now: ContinuousClock.Instant) {
        guard isOn, pendingSince == nil else { return }
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
