import Testing

@testable import Pipeline

/// The timer engine's waiting records (``TimerWaits``), without I/O: what the release loop is
/// woken for, what a revoke gives up and counts, and a fresh start on assignment.
@Suite("Timer waits: the engine's records between their read and their release")
struct TimerWaitsTests {
    @Test("a record due before the loop's wake wakes it, a later one does not; ripe records come with the next wake")
    func wakes() {
        var waits = TimerWaits<String>(window: 4)
        #expect(waits.armed == nil)
        #expect(waits.admit("a", partition: 0, offset: 10, wake: 5_000) == .waiting(wakeLoop: true), "nothing armed: wake")
        #expect(waits.admit("b", partition: 0, offset: 11, wake: 6_000) == .waiting(wakeLoop: false))
        #expect(waits.admit("c", partition: 1, offset: 3, wake: 4_000) == .waiting(wakeLoop: true), "sooner than the armed wake")
        #expect(waits.armed == 4_000 && waits.count == 3)
        let first = waits.ripe(at: 4_999)
        #expect(first.items == ["c"] && first.nextWake == 5_000 && waits.armed == 5_000)
        let rest = waits.ripe(at: 6_000)
        #expect(rest.items == ["a", "b"] && rest.nextWake == nil && waits.armed == nil && waits.count == 0)
    }

    @Test("a revoke gives up waiting records and counts them, and records read for the partition afterwards; an assignment starts afresh")
    func revoke() {
        var waits = TimerWaits<Int>(window: 4)
        for offset: Int64 in 0..<3 { _ = waits.admit(Int(offset), partition: 2, offset: offset, wake: 1_000 + offset) }
        _ = waits.admit(9, partition: 5, offset: 0, wake: 500)
        waits.abandon([2])
        #expect(waits.abandoned([2]) == 3 && waits.abandoned([5]) == 0 && waits.count == 1)
        #expect(waits.admit(3, partition: 2, offset: 3, wake: 10) == .abandoned, "read after the revoke began: not kept")
        #expect(waits.abandoned([2, 5]) == 4)
        #expect(waits.ripe(at: .max).items == [9], "the given-up records never come out")
        waits.assigned([2])
        #expect(waits.abandoned([2]) == 0)
        #expect(waits.admit(0, partition: 2, offset: 0, wake: 7) == .waiting(wakeLoop: true), "re-read from the committed offset")
    }

    @Test("a record read twice, or past a full window, or released and not finished, is counted as abandoned")
    func refusals() {
        var waits = TimerWaits<Int>(window: 2)
        _ = waits.admit(0, partition: 0, offset: 5, wake: 1)
        #expect(waits.admit(0, partition: 0, offset: 5, wake: 1) == .outOfOrder)
        _ = waits.admit(1, partition: 0, offset: 6, wake: 1)
        #expect(waits.admit(2, partition: 0, offset: 7, wake: 1) == .full)
        #expect(waits.abandoned([0]) == 2 && waits.count == 2)
        waits.gaveUp(partition: 0)
        #expect(waits.abandoned([0]) == 3, "a released record that did not finish")
    }
}
