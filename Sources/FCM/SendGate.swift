import DequeModule
import Synchronization

/// Decides when a send may start: after any project-wide quota pause, within the rate limit,
/// and with a free slot under the concurrency limit, which follows FCM's answer times
/// (``ConcurrencyLimit``).
///
/// One per project and worker, shared by every send. QUOTA_EXCEEDED for the project is a
/// project-wide signal, so ``pause(for:)`` holds back *all* sends, not just the one that saw it.
///
/// A lock, not an actor: a send with a free slot, no pause and no rate limit passes without
/// suspending; only a send that must wait suspends (for a slot, a pause or its rate slot).
final class SendGate: Sendable {
    private struct State {
        var pausedUntil: ContinuousClock.Instant?
        /// The configured cap (`fcm.max_sends_per_second`) and this worker's share of the
        /// project's (`fcm.project_sends_per_second`); the lower one holds.
        var configuredRate: Double?
        var shareRate: Double?
        var schedule: RateSchedule?
        var inFlight = 0
        var waiters: Deque<CheckedContinuation<Void, Never>> = []
        var concurrency: ConcurrencyLimit
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - sendsPerSecond: nil for no rate limit; else sends start as ``RateSchedule`` spaces them.
    ///   - concurrency: how the limit on sends in flight follows answer times.
    init(sendsPerSecond: Double?, concurrency: ConcurrencyLimit.Parameters) {
        let rate = sendsPerSecond.flatMap { $0 > 0 ? $0 : nil }
        state = Mutex(State(configuredRate: rate, schedule: rate.map(RateSchedule.init), concurrency: ConcurrencyLimit(concurrency)))
    }

    /// Sets this worker's share of the project's rate (nil: none); the lower of it and the
    /// configured cap holds from the next send on.
    func setShare(sendsPerSecond: Double?) {
        state.withLock { s in
            s.shareRate = sendsPerSecond.flatMap { $0 > 0 ? $0 : nil }
            let rate = Self.lower(s.configuredRate, s.shareRate)
            if rate != s.schedule?.sendsPerSecond { s.schedule = rate.map(RateSchedule.init) }
        }
    }

    /// The rate cap that holds now, if any.
    var sendsPerSecond: Double? { state.withLock { $0.schedule?.sendsPerSecond } }

    private static func lower(_ a: Double?, _ b: Double?) -> Double? {
        switch (a, b) {
        case (let a?, let b?): min(a, b)
        default: a ?? b
        }
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
        let now = ContinuousClock.now
        if let start = state.withLock({ $0.schedule?.start(askedAt: now) }), start > now {
            try? await Task.sleep(until: start, clock: .continuous)
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
