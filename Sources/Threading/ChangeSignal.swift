import Synchronization

/// Wakes tasks that wait for shared state to change, in place of polling it on a timer.
///
/// A waiter checks its condition and, while it does not hold, sleeps until the next
/// ``notify()``, its deadline or its cancellation, then checks again. The owner of the state
/// notifies at the transitions its waiters care about (the pipeline's room freed, a commit due,
/// partitions drained; a producer's delivery report), not on every change, so a busy pipeline
/// wakes nobody.
///
/// No wakeup is lost: each ``notify()`` moves a generation on, and a waiter parks only if the
/// generation it read before checking its condition is still current.
public final class ChangeSignal: Sendable {
    private struct State {
        var generation: UInt64 = 0
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Wakes every waiter to check its condition again (any thread). Without waiters, one lock.
    public func notify() {
        let woken = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.generation &+= 1
            guard !s.waiters.isEmpty else { return [] }
            defer { s.waiters.removeAll() }
            return Array(s.waiters.values)
        }
        for continuation in woken { continuation.resume() }
    }

    /// Waits until `condition` holds: true. False if `deadline` passes, or the task is
    /// cancelled, while it still does not.
    public func wait(until deadline: ContinuousClock.Instant? = nil, for condition: () -> Bool) async -> Bool {
        while true {
            let generation = state.withLock { $0.generation }
            if condition() { return true }
            if Task.isCancelled { return false }
            if let deadline, ContinuousClock.now >= deadline { return false }
            if let deadline {
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await self.park(since: generation) }
                    group.addTask { try? await Task.sleep(until: deadline) }
                    await group.next()
                    group.cancelAll()
                }
            } else {
                await park(since: generation)
            }
        }
    }

    /// Returns at the first ``notify()`` after `generation` (at once if one came already), or
    /// when the task is cancelled.
    private func park(since generation: UInt64) async {
        let id = state.withLock { s -> UInt64 in
            s.nextID &+= 1
            return s.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    // Cancelled before this registered: the handler below found nothing to resume.
                    if s.generation != generation || Task.isCancelled { return true }
                    s.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
