import DequeModule
import Synchronization

/// Tasks waiting until a changelog's tail has read past an offset (a reservation's read-back),
/// each woken once, when the tail passes its offset. A ``ChangeSignal`` would wake every waiter of
/// the partition at every batch the tail reads: with thousands of reservations in flight, each
/// checking under the tail's lock, that was a large share of an owner's CPU (docs/benchmarks.md,
/// "What a cap costs").
final class ReadBackWaiters: Sendable {
    private struct State {
        /// The tail's next offset.
        var next: Int64 = 0
        /// Waiters by offset, in order (they arrive nearly in order: inserted from the back).
        var queue: Deque<(offset: Int64, id: UInt64)> = []
        var continuations: [UInt64: CheckedContinuation<Bool, Never>] = [:]
        var lastID: UInt64 = 0
        /// The tail stopped: no offset will be read past any more.
        var closed = false
    }

    private let state = Mutex(State())

    /// Tasks waiting now.
    var waiting: Int { state.withLock { $0.continuations.count } }

    /// The tail's next offset is `next` now: wakes those waiting for an offset before it.
    func advance(to next: Int64) {
        let woken = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.next = max(s.next, next)
            var woken: [CheckedContinuation<Bool, Never>] = []
            while let first = s.queue.first, first.offset < s.next {
                s.queue.removeFirst()
                if let c = s.continuations.removeValue(forKey: first.id) { woken.append(c) }
            }
            return woken
        }
        for c in woken { c.resume(returning: true) }
    }

    /// The tail starts again from the partition's start (a re-claim): offsets read before no
    /// longer count.
    func reset() {
        state.withLock { $0.next = 0 }
    }

    /// The tail reads again (its follower started).
    func open() {
        state.withLock { $0.closed = false }
    }

    /// The tail stopped (its follower ended): every waiter returns false now, and so does every
    /// wait until ``open()``, rather than waiting for reads that will not come.
    func close() {
        let woken = state.withLock { s -> [CheckedContinuation<Bool, Never>] in
            s.closed = true
            s.queue.removeAll()
            defer { s.continuations.removeAll() }
            return Array(s.continuations.values)
        }
        for c in woken { c.resume(returning: false) }
    }

    /// Waits until the tail has read past `offset`: true; false if the task is cancelled or the
    /// tail stops first.
    func wait(past offset: Int64) async -> Bool {
        let id = state.withLock { s -> UInt64 in
            s.lastID &+= 1
            return s.lastID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { s -> Bool? in
                    if s.next > offset { return true }
                    if Task.isCancelled || s.closed { return false }
                    s.continuations[id] = continuation
                    var i = s.queue.endIndex
                    while i > s.queue.startIndex, s.queue[s.queue.index(before: i)].offset > offset { i = s.queue.index(before: i) }
                    s.queue.insert((offset, id), at: i)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            state.withLock { $0.continuations.removeValue(forKey: id) }?.resume(returning: false)
        }
    }
}
