import Synchronization

/// What tasks hand one of the client's threads, behind one lock: its requests in order (paced
/// ones apart, ``HTTPRequest/paced``) and whether to stop; with the pipe that wakes the thread
/// when it is parked in `poll(2)` (``LoopWakeup``). Both engines' loops take from one
/// (``CurlMultiLoop``, ``NativeLoop``): each turn the thread takes what is queued, and it parks
/// only with nothing to take, so a request handed to a busy thread costs no syscall.
final class LoopInbox<Transfer: AnyObject & Sendable>: Sendable {
    struct Queued: Sendable {
        var pending: [Transfer] = []
        var paced: [Transfer] = []
        var shuttingDown = false
        /// The thread is in (or about to enter) `poll` with nothing queued.
        var parked = false
        /// A wakeup was sent since the thread parked; more are not needed.
        var woken = false
        /// A paced request came since the thread last took the queue: it may be due before the
        /// wait the thread planned, so the thread must look before it parks.
        var pacedArrived = false

        var isEmpty: Bool { pending.isEmpty && paced.isEmpty }

        /// Takes every queued request, paced or not (at shutdown, to fail them).
        mutating func takeAll() -> [Transfer] {
            defer {
                pending.removeAll()
                paced.removeAll()
            }
            return pending + paced
        }

        /// Takes the queued requests whose ``HTTPRequest/notAfter`` (`notAfter`) is at or before
        /// `now`, the others keeping their order: they are failed, never sent.
        mutating func takeExpired(at now: ContinuousClock.Instant, notAfter: (Transfer) -> ContinuousClock.Instant?) -> [Transfer] {
            func expired(_ t: Transfer) -> Bool { notAfter(t).map { $0 <= now } ?? false }
            let taken = pending.filter(expired) + paced.filter(expired)
            guard !taken.isEmpty else { return [] }
            pending.removeAll(where: expired)
            paced.removeAll(where: expired)
            return taken
        }

        /// Takes the paced requests due at `now`, in order and at most `limit`, each at its
        /// slot (`slot`, ``RequestPacer``); and the slot of the first one left, if it is not due.
        mutating func takeDuePaced(
            at now: ContinuousClock.Instant, limit: Int, slot: (Transfer) -> ContinuousClock.Instant
        ) -> (due: ArraySlice<Transfer>, nextSlot: ContinuousClock.Instant?) {
            var count = 0
            var nextSlot: ContinuousClock.Instant?
            while count < limit, count < paced.count {
                let at = slot(paced[count])
                if at > now {
                    nextSlot = at
                    break
                }
                count += 1
            }
            let due = paced.prefix(count)
            paced.removeFirst(count)
            return (due, nextSlot)
        }
    }

    /// Taken and changed by the thread each turn, and by ``put(_:paced:)``.
    let queued = Mutex(Queued())
    let wakeup: LoopWakeup

    init() throws(HTTP2ClientError) {
        wakeup = try LoopWakeup()
    }

    /// Queues `transfer` (any thread), waking the thread if it is parked. False after shutdown:
    /// the caller fails it.
    func put(_ transfer: Transfer, paced: Bool) -> Bool {
        let wake: Bool? = queued.withLock { q in
            if q.shuttingDown { return nil }
            if paced {
                q.paced.append(transfer)
                q.pacedArrived = true
            } else {
                q.pending.append(transfer)
            }
            // A busy thread takes the queue on its next turn; only a parked one needs a wakeup
            // (a syscall), and only one per park.
            guard q.parked && !q.woken else { return false }
            q.woken = true
            return true
        }
        if wake == true { wakeup.signal() }
        return wake != nil
    }

    /// Asks the thread to stop (any thread).
    func requestShutdown() {
        queued.withLock { $0.shuttingDown = true }
        wakeup.signal()
    }

    /// The thread is back from `poll`.
    func unpark() {
        queued.withLock { $0.parked = false }
    }
}
