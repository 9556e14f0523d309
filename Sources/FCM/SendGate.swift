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
        /// Callers of ``waitForRoom()`` and ``whenRoom(_:)``, in the order they came: woken one
        /// per slot free for no waiter.
        var roomWaiters: Deque<RoomWaiter> = []
        var nextRoomWaiter: UInt64 = 0
        var concurrency: ConcurrencyLimit
        /// The later of FCM's last answer and when a send last took a slot with none in flight:
        /// with sends in flight, nothing has been heard from FCM since (``unanswered(at:)``).
        var heard: ContinuousClock.Instant?

        /// A send that does not queue may take a slot now: one is free and no send waits for one.
        var hasRoom: Bool { waiters.isEmpty && inFlight < concurrency.limit }
    }

    /// Who waits for room (``waitForRoom()``, ``whenRoom(_:)``): `id` finds a cancelled one;
    /// `wake` says whether it will try for the slot (false: the next waiter gets it).
    private struct RoomWaiter {
        let id: UInt64
        let wake: @Sendable () -> Bool

        /// The ID of a ``whenRoom(_:)`` waiter: never cancelled, so never looked for (those of
        /// ``waitForRoom()`` start at 1).
        static let uncancellable: UInt64 = 0
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

    /// Why ``tryAcquire()`` took no slot.
    enum Refusal: Error {
        /// Every slot is taken, or sends wait for one: ``waitForRoom()``, then try again.
        case full
        /// Sends are paused (the project's QUOTA_EXCEEDED): ``acquire()`` waits it out.
        case paused
    }

    /// Takes a slot if one is free now, no send waits for one and no pause holds; never waits.
    /// Pair with ``release(answerTime:)``.
    func tryAcquire() -> Result<Void, Refusal> {
        let now = ContinuousClock.now
        return state.withLock { s in
            if let until = s.pausedUntil, until > now { return .failure(.paused) }
            guard s.hasRoom else { return .failure(.full) }
            if s.inFlight == 0 { s.heard = now }
            s.inFlight += 1
            return .success(())
        }
    }

    /// Returns once a slot is free (not taken for the caller: another may take it first, so
    /// try ``tryAcquire()`` again), or the task is cancelled.
    func waitForRoom() async {
        let id = state.withLock { s -> UInt64 in
            s.nextRoomWaiter += 1
            return s.nextRoomWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let wake: @Sendable () -> Bool = {
                    waiter.resume()
                    return true
                }
                if !Task.isCancelled, queueForRoom(RoomWaiter(id: id, wake: wake)) { return }
                waiter.resume()
            }
        } onCancel: {
            _ = state.withLock { s in s.roomWaiters.firstIndex { $0.id == id }.map { s.roomWaiters.remove(at: $0) } }?.wake()
        }
    }

    /// Runs `action` once a slot is free, as ``waitForRoom()`` returns, but without a task
    /// waiting: at once (on the caller's thread) if there is room now, else on the thread of
    /// the ``release(answerTime:)`` that frees it, after those who came before. The slot is not
    /// taken for `action`: it must be quick, and return whether its caller will try
    /// ``tryAcquire()`` again; false (it no longer wants a slot) passes the room to the next.
    func whenRoom(_ action: @escaping @Sendable () -> Bool) {
        if !queueForRoom(RoomWaiter(id: RoomWaiter.uncancellable, wake: action)), !action() {
            wake(state.withLock { s in Self.popRoomWaiters(&s, s.concurrency.limit - s.inFlight) })
        }
    }

    /// Queues `waiter` for room unless there is room now (false: wake it yourself).
    private func queueForRoom(_ waiter: RoomWaiter) -> Bool {
        state.withLock { s in
            if s.hasRoom { return false }
            s.roomWaiters.append(waiter)
            return true
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
            if s.inFlight == 0 { s.heard = .now }
            s.inFlight += 1
            return true
        }
    }

    /// Frees a slot. `answerTime` is how long the send took from the slot to FCM's answer (nil
    /// when it got none: it says nothing of answer times). The freed slot, and any the limit
    /// gained, pass to waiting sends.
    func release(answerTime: Duration?) {
        let now = ContinuousClock.now
        let (next, room) = state.withLock { s -> ([CheckedContinuation<Void, Never>], [RoomWaiter]) in
            if let answerTime {
                s.concurrency.completed(answerTime: answerTime, at: now)
                s.heard = now
            } else {
                s.concurrency.advance(to: now)
            }
            s.inFlight -= 1
            var next: [CheckedContinuation<Void, Never>] = []
            while s.inFlight < s.concurrency.limit, let waiter = s.waiters.popFirst() {
                s.inFlight += 1
                next.append(waiter)
            }
            return (next, Self.popRoomWaiters(&s, s.concurrency.limit - s.inFlight))
        }
        for waiter in next { waiter.resume() }
        wake(room)
    }

    /// Tells `woken`, waiters for room popped one per free slot, first come first: each will
    /// try to take one. One that no longer wants a slot passes it to the next, so room is not
    /// left unused while waiters for it remain (at worst one more wakes than finds a slot, and
    /// waits again).
    private func wake(_ woken: [RoomWaiter]) {
        var woken = woken
        while !woken.isEmpty {
            let passed = woken.count { !$0.wake() }
            woken = passed == 0 ? [] : state.withLock { s in Self.popRoomWaiters(&s, passed) }
        }
    }

    private static func popRoomWaiters(_ s: inout State, _ count: Int) -> [RoomWaiter] {
        let count = min(count, s.roomWaiters.count)
        guard count > 0 else { return [] }
        defer { s.roomWaiters.removeFirst(count) }
        return Array(s.roomWaiters.prefix(count))
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

    /// Waiters for room (``waitForRoom()``, ``whenRoom(_:)``) not yet told of any.
    var roomWaitersCount: Int { state.withLock { $0.roomWaiters.count } }

    /// How long sends have been in flight with no answer from FCM at all, and how many are:
    /// nil while none is in flight. A stall that fails nothing (a connection that went silent,
    /// a token that does not come) shows here before any send fails.
    func unanswered(at now: ContinuousClock.Instant) -> (duration: Duration, sends: Int)? {
        state.withLock { s in
            guard s.inFlight > 0, let heard = s.heard else { return nil }
            return (max(.zero, now - heard), s.inFlight)
        }
    }

    /// Sends in flight at most now.
    var concurrencyLimit: Int { state.withLock { $0.concurrency.limit } }
}
