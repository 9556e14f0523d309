import Synchronization

/// Holds an ``HTTP2Client``'s paced requests (``HTTPRequest/paced``) to a rate as they go on the
/// wire, spaced by one ``RateSchedule`` that every thread of the client shares.
///
/// The rate is kept here, where a request leaves, rather than where its caller asks for it:
/// requests spaced on asking but then held for a connection (the first one's TLS handshake, one
/// opened as the streams fill) would all go out together once it opens, well over the cap for a
/// moment at the start of every run (`scripts/bench.sh latency`, docs/benchmarks.md).
final class RequestPacer: Sendable {
    private let schedule = Mutex<RateSchedule?>(nil)

    /// Requests a second at most; nil: not paced.
    var perSecond: Double? { schedule.withLock { $0?.perSecond } }

    /// Sets the rate (nil, zero or less: none), from the next request on.
    func setRate(_ perSecond: Double?) {
        let rate = perSecond.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
        schedule.withLock { s in
            if rate != s?.perSecond { s = rate.map { RateSchedule(perSecond: $0) } }
        }
    }

    /// When a request asking at `now` may go, reserved for it; `now` when no rate is set.
    func reserve(askedAt now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        schedule.withLock { $0?.start(askedAt: now) } ?? now
    }

    /// When a request asking at `now` could go, reserving nothing.
    func peek(askedAt now: ContinuousClock.Instant) -> ContinuousClock.Instant {
        schedule.withLock { $0?.peek(askedAt: now) } ?? now
    }
}
