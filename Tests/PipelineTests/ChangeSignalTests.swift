import Kafka
import Synchronization
import Testing

@testable import Pipeline

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

    // MARK: The coordinator notifies at transitions

    func message(_ offset: Int64) -> KafkaMessage {
        KafkaMessage(topic: "events", partition: 0, offset: offset, value: Array("{}".utf8))
    }

    @Test(
        "the coordinator frees the reader when an event ends at the bound, wakes the commit loop when a commit is due, and a drain when a partition empties"
    )
    func coordinatorTransitions() async {
        let coordinator = PipelineCoordinator(
            limits: PartitionTable.Limits(maxEventsInFlight: 2, partitionBuffer: 10), withOffsetMap: false, commitEveryEvents: 2)
        let tp = TopicPartition(topic: "events", partition: 0)
        coordinator.assign([TopicPartitionOffset(tp, offset: KafkaOffset(0))])
        #expect(coordinator.receive(message(0)).receipt == .process)
        #expect(coordinator.receive(message(1)).full)

        let reader = Task { await coordinator.roomFreed.wait { !coordinator.isFull } }
        let commits = Task { await coordinator.commitBecameDue.wait { coordinator.commitDue } }
        let drain = Task { await coordinator.drained.wait { coordinator.inFlight([tp]) == 0 } }
        _ = coordinator.finished(message(0), done: true, fatal: nil)
        #expect(await reader.value, "below the bound again")
        _ = coordinator.finished(message(1), done: true, fatal: nil)
        #expect(await commits.value, "two events done: a commit is due")
        #expect(await drain.value, "nothing in flight in the partition")
    }
}
