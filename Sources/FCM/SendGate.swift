import DequeModule
import Synchronization

/// Decides when a send may start: after any project-wide quota pause, and with a free slot
/// under the concurrency limit, which follows FCM's answer times (``ConcurrencyLimit``). A rate
/// cap is kept where sends go on the wire (``HTTP2Client/setRate(_:)``).
///
/// One per project and worker, shared by every send. QUOTA_EXCEEDED for the project is a
/// project-wide signal, so ``pause(for:)`` holds back *all* sends, not just the one that saw it.
///
/// A lock, not an actor: a send with a free slot and no pause passes without suspending; only
/// a send that must wait suspends (for a slot or a pause).
final class SendGate: Sendable {
    private struct State {
        var pausedUntil: ContinuousClock.Instant?
        var inFlight = 0
        var waiters: Deque<CheckedContinuation<Void, Never>> = []
        var concurrency: ConcurrencyLimit
    }

    private let state: Mutex<State>

    /// - Parameter concurrency: how the limit on sends in flight follows answer times.
    init(concurrency: ConcurrencyLimit.Parameters) {
        state = Mutex(State(concurrency: ConcurrencyLimit(concurrency)))
    }

    /// Waits until a send may start; pair with ``release(answerTime:)``.
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
    }

    /// Takes a free slot; without one, queues `waiter` (if given) in the same lock, so a
    /// release cannot slip between the check and the queueing.
    private func takeSlot(orQueue waiter: CheckedContinuation<Void, Never>? = nil) -> Bool {
        state.withLock { s in
            if s.inFlight >= s.concurrency.limit {
                if let waiter { s.waiters.append(waiter) }  // a releaser hands its slot over
                return false
            }
            s.inFlight += 1
            return true
        }
    }

    /// Frees a slot. `answerTime` is how long the send took from the slot to FCM's answer (nil
    /// when it got none: it says nothing of answer times). The freed slot, and any the limit
    /// gained, pass to waiting sends.
    func release(answerTime: Duration?) {
        let now = ContinuousClock.now
        let next = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            if let answerTime { s.concurrency.completed(answerTime: answerTime, at: now) } else { s.concurrency.advance(to: now) }
            s.inFlight -= 1
            var next: [CheckedContinuation<Void, Never>] = []
            while s.inFlight < s.concurrency.limit, let waiter = s.waiters.popFirst() {
                s.inFlight += 1
                next.append(waiter)
            }
            return next
        }
        for waiter in next { waiter.resume() }
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

    /// Sends in flight at most now.
    var concurrencyLimit: Int { state.withLock { $0.concurrency.limit } }
}
