import DequeModule

/// Decides when a send may start: after any project-wide quota pause, within the rate limit,
/// and with a free slot under the concurrency limit.
///
/// One per project and worker, shared by every send. QUOTA_EXCEEDED is a project-wide signal,
/// so ``pause(for:)`` holds back *all* sends, not just the one that saw it.
actor SendGate {
    private let minimumInterval: Duration?
    private let burst: Duration
    private let maxConcurrent: Int?
    private var pausedUntil: ContinuousClock.Instant?
    /// GCRA: the theoretical time the next send may start.
    private var nextStart: ContinuousClock.Instant = .now
    private var inFlight = 0
    private var waiters: Deque<CheckedContinuation<Void, Never>> = []

    /// - Parameters:
    ///   - sendsPerSecond: nil for no rate limit. Up to one second's worth may start at once.
    ///   - maxConcurrent: nil for no limit (the HTTP/2 client still bounds streams).
    init(sendsPerSecond: Double?, maxConcurrent: Int?) {
        if let rate = sendsPerSecond, rate > 0 {
            minimumInterval = .nanoseconds(Int64(1e9 / rate))
            burst = .seconds(1)
        } else {
            minimumInterval = nil
            burst = .zero
        }
        self.maxConcurrent = maxConcurrent.map { max(1, $0) }
    }

    /// Waits until a send may start; pair with ``release()``.
    func acquire() async {
        if let maxConcurrent, inFlight >= maxConcurrent {
            await withCheckedContinuation { waiters.append($0) }  // the releaser hands its slot over
        } else {
            inFlight += 1
        }
        // Checked with the slot held, so a pause that began while this send queued still applies.
        while let until = pausedUntil, until > .now, !Task.isCancelled {
            try? await Task.sleep(until: until, clock: .continuous)
        }
        if let interval = minimumInterval {
            let now = ContinuousClock.now
            let start = max(nextStart, now - burst)
            nextStart = start + interval
            if start > now { try? await Task.sleep(until: start, clock: .continuous) }
        }
    }

    func release() {
        if let next = waiters.popFirst() {
            next.resume()  // the slot passes on; inFlight is unchanged
        } else {
            inFlight -= 1
        }
    }

    /// Holds back every send that has not started for at least `duration`.
    func pause(for duration: Duration) {
        let until = ContinuousClock.now + duration
        if pausedUntil.map({ $0 < until }) ?? true { pausedUntil = until }
    }

    /// When sending resumes, if it is paused (for readiness and metrics).
    var pausedUntilInstant: ContinuousClock.Instant? {
        guard let pausedUntil, pausedUntil > .now else { return nil }
        return pausedUntil
    }
}
