import Synchronization
import Testing

@testable import Threading

/// The waits that replaced the pipeline's sleep-poll loops (no I/O).
@Suite("ChangeSignal: waits that wake on a change, not on a timer")
struct ChangeSignalTests {
    @Test("a condition that holds returns at once; one that comes true wakes its waiter at the next notify")
    func wakesOnNotify() async {
        let signal = ChangeSignal()
        #expect(await signal.wait { true })
        let flag = Atomic<Bool>(false)
        let waiter = Task { await signal.wait { flag.load(ordering: .acquiring) } }
        flag.store(true, ordering: .releasing)
        signal.notify()
        #expect(await waiter.value)
    }

    @Test("a deadline ends the wait with false; cancellation ends a wait with no deadline")
    func deadlineAndCancellation() async {
        let signal = ChangeSignal()
        #expect(await signal.wait(until: .now + .milliseconds(30)) { false } == false)
        signal.notify()  // a notify with nobody waiting wakes nobody later
        #expect(await signal.wait(until: .now + .milliseconds(30)) { false } == false)
        let waiter = Task { await signal.wait { false } }
        waiter.cancel()
        #expect(await waiter.value == false)
    }

    @Test("no wakeup is lost: a notify racing the waiter's check still wakes it (2,000 rounds)")
    func noLostWakeup() async {
        let signal = ChangeSignal()
        for _ in 0..<2_000 {
            let flag = Atomic<Bool>(false)
            async let woken = signal.wait(until: .now + .seconds(20)) { flag.load(ordering: .acquiring) }
            flag.store(true, ordering: .releasing)
            signal.notify()
            guard await woken else {
                Issue.record("a waiter missed its notify and sat until the deadline")
                return
            }
        }
    }
}
