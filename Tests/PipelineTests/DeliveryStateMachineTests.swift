import Kafka
import Testing

@testable import Pipeline

/// The worker's delivery state without I/O: each input and what it tells the shell to do
/// (process, bring the consumer's pauses up to date, wake the reader, the commit loop, drains).
@Suite("DeliveryStateMachine: inputs and the actions they return, without I/O")
struct DeliveryStateMachineTests {
    let p0 = TopicPartition(topic: "events", partition: 0)
    let p1 = TopicPartition(topic: "events", partition: 1)

    func machine(maxEventsInFlight: Int = 100, partitionBuffer: Int = 10, commitEveryEvents: Int = 1_000) -> DeliveryStateMachine {
        var m = DeliveryStateMachine(
            limits: PartitionTable.Limits(maxEventsInFlight: maxEventsInFlight, partitionBuffer: partitionBuffer), withOffsetMap: false,
            commitEveryEvents: commitEveryEvents)
        m.assigned([TopicPartitionOffset(p0, offset: KafkaOffset(0)), TopicPartitionOffset(p1, offset: .invalid)])
        return m
    }

    @Test("the reader is woken when an event ends at the bound; the commit loop when a commit is due; a drain when a partition empties")
    func wakesAtTransitions() {
        var m = machine(maxEventsInFlight: 2, commitEveryEvents: 2)
        let r1 = m.received(p0, offset: 0)
        #expect(r1 == .init(receipt: .process))
        let second = m.received(p0, offset: 1)
        #expect(second.full, "two in flight: the reader waits")
        #expect(second.flowChanged, "the worker's bound pauses every partition")

        let first = m.finished(p0, offset: 0, done: true)
        #expect(first.wakes == [.room], "below the bound again; one done is not yet a commit; p0 still has one in flight")
        let last = m.finished(p0, offset: 1, done: true)
        #expect(last.wakes == [.commitDue, .drained])
        #expect(m.commitDue)
        let r2 = m.finished(p0, offset: 1, done: true)
        #expect(r2.wakes == [.drained], "a repeat changes nothing but reports the partition empty")
    }

    @Test("an event that ended without being done (abandoned) changes nothing: it is never committed past")
    func abandonedChangesNothing() {
        var m = machine()
        _ = m.received(p0, offset: 0)
        let r3 = m.finished(p0, offset: 0, done: false)
        #expect(r3 == .init())
        #expect(m.table.inFlight(p0) == 1)
        #expect(m.pendingCommits().isEmpty)
    }

    @Test("a partition being revoked takes no new message; a re-assignment takes it again")
    func revokeStopsAdmission() {
        var m = machine()
        m.revokeBegan([p0])
        let r4 = m.received(p0, offset: 0)
        #expect(r4.receipt == .ignore)
        let r5 = m.received(p1, offset: 0)
        #expect(r5.receipt == .process)
        m.assigned([TopicPartitionOffset(p0, offset: KafkaOffset(0))])
        let r6 = m.received(p0, offset: 0)
        #expect(r6.receipt == .process)
    }

    @Test("a partition given up is forgotten: drains wake, its events are no longer held, a full worker has room again")
    func releaseForgets() {
        var m = machine(maxEventsInFlight: 2)
        _ = m.received(p0, offset: 0)
        _ = m.received(p0, offset: 1)
        #expect(m.isFull)
        let r7 = m.released([p0])
        #expect(r7 == [.room, .drained])
        #expect(!m.holds(p0))
        #expect(m.holds(p1))
        let r8 = m.finished(p0, offset: 0, done: true)
        #expect(r8.wakes == [.drained], "an event of a released partition is ignored")
    }

    @Test("pauses are counted when asked for, resumes once done; each is asked for once")
    func pausesToApply() {
        var m = machine(partitionBuffer: 2)
        _ = m.received(p0, offset: 0)
        let r9 = m.received(p0, offset: 1)
        #expect(r9.flowChanged)
        let r10 = m.pausesToApply()
        #expect(r10 == .init(pause: [p0]))
        let r11 = m.pausesToApply()
        #expect(r11.isEmpty, "already counted as paused")
        let r12 = m.finished(p0, offset: 0, done: true)
        #expect(r12.flowChanged, "drained to half its buffer (1 of 2): resume")
        let r13 = m.pausesToApply()
        #expect(r13 == .init(resume: [p0]))
        let r14 = m.pausesToApply()
        #expect(r14 == .init(resume: [p0]), "not yet resumed: asked for again (a failed call is retried)")
        m.resumed([p0])
        let r15 = m.pausesToApply()
        #expect(r15.isEmpty)
    }

    @Test(
        "the calls asked for are the table's state against what the consumer was told, never queued deltas: a resume and a pause again before any apply ask for one pause"
    )
    func noStaleResume() {
        var m = machine(partitionBuffer: 2)
        _ = m.received(p0, offset: 0)
        _ = m.received(p0, offset: 1)
        _ = m.finished(p0, offset: 0, done: true)
        _ = m.finished(p0, offset: 1, done: true)  // the table resumed p0 before anyone paused it
        _ = m.received(p0, offset: 2)
        _ = m.received(p0, offset: 3)  // and paused it again
        let r16 = m.pausesToApply()
        #expect(r16 == .init(pause: [p0]), "one pause, no resume")
    }

    @Test("a partition given up leaves the consumer's paused set: paused again after a re-assignment")
    func releasedPauseIsSentAgain() {
        var m = machine(partitionBuffer: 2)
        _ = m.received(p0, offset: 0)
        _ = m.received(p0, offset: 1)
        let r17 = m.pausesToApply()
        #expect(r17 == .init(pause: [p0]))
        _ = m.released([p0])
        let r18 = m.pausesToApply()
        #expect(r18.isEmpty, "the consumer resumes what it unassigns: nothing to resume")
        m.assigned([TopicPartitionOffset(p0, offset: KafkaOffset(0))])
        _ = m.received(p0, offset: 0)
        _ = m.received(p0, offset: 1)
        let r19 = m.pausesToApply()
        #expect(r19 == .init(pause: [p0]))
    }

    @Test("while commits fail the worker fills at in flight plus uncommitted; an acknowledged commit frees it")
    func commitOutage() {
        var m = DeliveryStateMachine(
            limits: PartitionTable.Limits(maxEventsInFlight: 10, partitionBuffer: 10, maxUncommittedEvents: 12), withOffsetMap: false,
            commitEveryEvents: 100)
        m.assigned([TopicPartitionOffset(p0, offset: KafkaOffset(0))])
        m.commitFailed()
        for o in Int64(0)..<10 { _ = m.received(p0, offset: o) }
        for o in Int64(0)..<3 { _ = m.finished(p0, offset: o, done: true) }
        let r20 = m.received(p0, offset: 10)
        #expect(!r20.full, "8 in flight + 3 finished, uncommitted: 11 of 12")
        let r21 = m.received(p0, offset: 11)
        #expect(r21.full, "12 of 12: full, though only 9 are in flight")
        let offsets = m.pendingCommits()
        #expect(offsets == [TopicPartitionOffset(p0, offset: KafkaOffset(3))])
        let r22 = m.commitAcked(offsets)
        #expect(r22 == [.room])
        #expect(!m.isFull)
    }
}
