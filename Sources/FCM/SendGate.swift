import DequeModule
import Synchronization

/// Decides when a send may start: after any project-wide quota pause, within the rate limit,
/// and with a free slot under the concurrency limit.
///
/// One per project and worker, shared by every send. QUOTA_EXCEEDED is a project-wide signal,
/// so ``pause(for:)`` holds back *all* sends, not just the one that saw it.
///
/// A lock, not an actor: a send with a free slot, no pause and no rate limit passes without
/// suspending; only a send that must wait suspends (for a slot, a pause or its rate slot).
final class SendGate: Sendable {
    private struct State {
        var pausedUntil: ContinuousClock.Instant?
        /// GCRA: the theoretical time the next send may start.
        var nextStart: ContinuousClock.Instant = .now
        var inFlight = 0
        var waiters: Deque<CheckedContinuation<Void, Never>> = []
    }

    private let minimumInterval: Duration?
    private let burst: Duration
    private let maxConcurrent: Int?
    private let state = Mutex(State())

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
        if !takeSlot() {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                // A release may have come between the two locks: try again before queueing.
                if takeSlot(orQueue: waiter) { waiter.resume() }
            }
        }
        // Checked with the slot held, so a pause that began while this send queued still applies.
        while let until = state.withLock({ $0.pausedUntil }), until > .now, !Task.isCancelled {
            try? await Task.sleep(until: until, clock: .continuous)
        }
        if let interval = minimumInterval {
            let now = ContinuousClock.now
            let start = state.withLock { s in
                let start = max(s.nextStart, now - burst)
                s.nextStart = start + interval
                return start
            }
            if start > now { try? await Task.sleep(until: start, clock: .continuous) }
        }
    }

    /// Takes a free slot; without one, queues `waiter` (if given) in the same lock, so a
    /// release cannot slip between the check and the queueing.
    private func takeSlot(orQueue waiter: CheckedContinuation<Void, Never>? = nil) -> Bool {
        state.withLock { s in
            if let maxConcurrent, s.inFlight >= maxConcurrent {
                if let waiter { s.waiters.append(waiter) }  // the releaser hands its slot over
                return false
            }
            s.inFlight += 1
            return true
        }
    }

    func release() {
        let next = state.withLock { s -> CheckedContinuation<Void, Never>? in
            if let next = s.waiters.popFirst() { return next }  // the slot passes on; inFlight is unchanged
            s.inFlight -= 1
            return nil
        }
        next?.resume()
    }

    /// Holds back every send that has not started for at least `duration`.
    func pause(for duration: Duration) {
        let until = ContinuousClock.now + duration
        state.withLock { s in
            if s.pausedUntil.map({ $0 < until }) ?? true { s.pausedUntil = until }
        }
    }

    /// When sending resumes, if it is paused (for readiness and metrics).
    var pausedUntilInstant: ContinuousClock.Instant? {
        guard let pausedUntil = state.withLock({ $0.pausedUntil }), pausedUntil > .now else { return nil }
        return pausedUntil
    }
}
