import Synchronization
import Testing

@testable import Pipeline

/// Waiters for a changelog tail to pass an offset: each woken once, when the tail passes its
/// offset, in any order of arrival; a cancelled one ends without waiting.
@Suite("Read-back waiters: woken by offset, not by every batch")
struct ReadBackWaitersTests {
    @Test("a waiter wakes when the tail passes its offset, not before; one already passed returns at once")
    func wakesByOffset() async {
        let waiters = ReadBackWaiters()
        let woken = Woken()
        await withTaskGroup(of: Void.self) { group in
            for offset: Int64 in [5, 2, 9, 3] {  // out of order
                group.addTask {
                    #expect(await waiters.wait(past: offset))
                    woken.add(offset)
                }
            }
            // Each advance wakes exactly those before the new next offset.
            await waitUntil { waiters.waiting == 4 }
            waiters.advance(to: 3)
            await waitUntil { woken.all.count == 1 }
            #expect(woken.all == [2])
            waiters.advance(to: 6)
            await waitUntil { woken.all.count == 3 }
            #expect(Set(woken.all) == [2, 3, 5])
            waiters.advance(to: 10)
        }
        #expect(Set(woken.all) == [2, 3, 5, 9])
        #expect(await waiters.wait(past: 7), "passed already")
        #expect(waiters.waiting == 0)
    }

    @Test("a cancelled waiter returns false, and later advances skip it")
    func cancelled() async {
        let waiters = ReadBackWaiters()
        let task = Task { await waiters.wait(past: 100) }
        await waitUntil { waiters.waiting == 1 }
        task.cancel()
        #expect(await task.value == false)
        #expect(waiters.waiting == 0)
        waiters.advance(to: 200)
    }

    final class Woken: Sendable {
        private let offsets = Mutex<[Int64]>([])
        func add(_ offset: Int64) { offsets.withLock { $0.append(offset) } }
        var all: [Int64] { offsets.withLock { $0 } }
    }

    @Test("when the tail stops, waiters return false at once, and so do later waits until it reads again")
    func closed() async {
        let waiters = ReadBackWaiters()
        let task = Task { await waiters.wait(past: 10) }
        await waitUntil { waiters.waiting == 1 }
        waiters.close()
        #expect(await task.value == false)
        #expect(await waiters.wait(past: 20) == false)
        waiters.open()
        waiters.advance(to: 30)
        #expect(await waiters.wait(past: 20))
    }

    /// Yields until `condition` holds (the tasks under test run on the cooperative pool).
    func waitUntil(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }
}
