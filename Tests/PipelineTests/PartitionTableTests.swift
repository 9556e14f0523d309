import Kafka
import Pipeline
import Testing

@Suite("PartitionTable: per-partition progress, flow control and commits, without I/O")
struct PartitionTableTests {
    let p0 = TopicPartition(topic: "events", partition: 0)
    let p1 = TopicPartition(topic: "events", partition: 1)

    @Test("commits per partition stop at that partition's first unfinished event")
    func commitsPerPartition() {
        var t = PartitionTable()
        t.assign(p0, committed: 100, metadata: nil)
        t.assign(p1, committed: nil, metadata: nil)
        for o in Int64(100)..<105 { #expect(t.receive(p0, offset: o) == .process) }
        for o in Int64(0)..<3 { #expect(t.receive(p1, offset: o) == .process) }
        #expect(t.inFlight == 8)
        t.done(p0, offset: 101)
        t.done(p0, offset: 100)
        t.done(p1, offset: 2)
        let pending = t.pendingCommits(withOffsetMap: false)
        #expect(
            pending == [
                TopicPartitionOffset(topic: "events", partition: 0, offset: 102),
                TopicPartitionOffset(topic: "events", partition: 1, offset: 0),
            ],
            "p1's offset 0 is unfinished: its commit stays at 0 although 2 is done")
        t.committed(pending)
        #expect(t.pendingCommits(withOffsetMap: false).isEmpty)
        #expect(t.inFlight == 5 && t.doneSinceCommit == 0)
    }

    @Test("the offset map goes into the metadata, and a restart from it skips what was done")
    func offsetMapRoundTrip() {
        var t = PartitionTable()
        t.assign(p0, committed: 10, metadata: nil)
        for o in Int64(10)..<15 { _ = t.receive(p0, offset: o) }
        t.done(p0, offset: 12)
        t.done(p0, offset: 14)
        let pending = t.pendingCommits(withOffsetMap: true)
        #expect(pending.map(\.offset) == [10] && pending.first?.metadata == "pb1:10:2,4")

        var restarted = PartitionTable()
        restarted.assign(p0, committed: 10, metadata: pending.first?.metadata)
        let receipts = (Int64(10)..<15).map { restarted.receive(p0, offset: $0) }
        #expect(receipts == [.process, .process, .skipAlreadyDone, .process, .skipAlreadyDone])
        #expect(restarted.inFlight == 3)
    }

    @Test("unassigned partitions, re-deliveries and repeated completions are ignored")
    func ignores() {
        var t = PartitionTable()
        #expect(t.receive(p0, offset: 0) == .ignore, "not assigned")
        t.assign(p0, committed: 5, metadata: nil)
        #expect(t.receive(p0, offset: 4) == .ignore, "below the committed offset")
        #expect(t.receive(p0, offset: 5) == .process)
        #expect(t.receive(p0, offset: 5) == .ignore, "the same offset again")
        t.done(p0, offset: 5)
        t.done(p0, offset: 5)
        t.done(p1, offset: 5)
        #expect(t.inFlight == 0 && t.doneSinceCommit == 1)
    }

    @Test("a partition is paused at its buffer limit and resumed at half of it")
    func partitionBackpressure() {
        var t = PartitionTable(limits: .init(maxEventsInFlight: 1_000, partitionBuffer: 4))
        t.assign(p0, committed: 0, metadata: nil)
        t.assign(p1, committed: 0, metadata: nil)
        for o in Int64(0)..<3 { _ = t.receive(p0, offset: o) }
        #expect(t.flowChange().isEmpty)
        _ = t.receive(p0, offset: 3)
        _ = t.receive(p1, offset: 0)
        #expect(t.flowChange() == .init(pause: [p0], resume: []))
        #expect(t.flowChange().isEmpty, "already paused")
        t.done(p0, offset: 0)
        #expect(t.flowChange().isEmpty, "3 in flight is above half of 4")
        t.done(p0, offset: 2)
        #expect(t.flowChange() == .init(pause: [], resume: [p0]))
        #expect(!t.isPaused(p0) && !t.isPaused(p1))
    }

    @Test("every partition is paused when the worker's bound is reached, and resumed at half")
    func workerBackpressure() {
        var t = PartitionTable(limits: .init(maxEventsInFlight: 4, partitionBuffer: 100))
        t.assign(p0, committed: 0, metadata: nil)
        t.assign(p1, committed: 0, metadata: nil)
        _ = t.receive(p0, offset: 0)
        _ = t.receive(p0, offset: 1)
        _ = t.receive(p1, offset: 0)
        #expect(t.flowChange().isEmpty)
        _ = t.receive(p1, offset: 1)
        #expect(t.flowChange() == .init(pause: [p0, p1], resume: []))
        t.done(p1, offset: 0)
        #expect(t.flowChange().isEmpty, "3 of 4 is not drained to half")
        t.done(p1, offset: 1)
        #expect(t.flowChange() == .init(pause: [], resume: [p0, p1]))
    }

    @Test("while commits fail, finished events count against the worker's bound until a commit is acknowledged")
    func uncommittedBound() {
        var t = PartitionTable(limits: .init(maxEventsInFlight: 4, partitionBuffer: 100, maxUncommittedEvents: 6))
        t.assign(p0, committed: 0, metadata: nil)
        for offset: Int64 in 0..<4 { _ = t.receive(p0, offset: offset) }
        #expect(t.isFull, "4 in flight")
        for offset: Int64 in 0..<3 { t.done(p0, offset: offset) }
        #expect(!t.isFull, "1 in flight, 3 finished: 4 of 6 uncommitted")
        _ = t.receive(p0, offset: 4)
        _ = t.receive(p0, offset: 5)
        #expect(!t.isFull, "commits are not failing: only events in flight count")
        t.commitFailed()
        #expect(t.isFull, "3 in flight + 3 finished reach 6 while commits fail, although only 3 are in flight")
        for offset: Int64 in 3..<6 { t.done(p0, offset: offset) }
        #expect(t.isFull, "nothing in flight, but 6 finished and not committed")
        let pending = t.pendingCommits(withOffsetMap: false)
        #expect(pending.map(\.offset.rawValue) == [6])
        t.committed(pending)
        #expect(!t.isFull && !t.commitsFailing && t.doneSinceCommit == 0)
    }

    @Test("removing a partition forgets its events; their completions no longer count")
    func remove() {
        var t = PartitionTable()
        t.assign(p0, committed: 0, metadata: nil)
        t.assign(p1, committed: 0, metadata: nil)
        _ = t.receive(p0, offset: 0)
        _ = t.receive(p1, offset: 0)
        _ = t.receive(p1, offset: 1)
        t.done(p1, offset: 1)
        t.remove([p1])
        #expect(t.inFlight == 1 && t.partitions == [p0])
        t.done(p1, offset: 0)
        #expect(t.inFlight == 1)
        #expect(t.pendingCommits(withOffsetMap: false).isEmpty)
        t.assign(p1, committed: 7, metadata: nil)
        #expect(t.tracker(p1)?.watermark == 7, "a re-assigned partition starts from its committed offset")
    }

    @Test("random completion orders never commit past an unfinished event", arguments: 0..<20)
    func randomized(seed: Int) {
        var rng = SplitMix(seed: UInt64(seed))
        var t = PartitionTable(limits: .init(maxEventsInFlight: 50, partitionBuffer: 20))
        t.assign(p0, committed: 0, metadata: nil)
        var unfinished = Set<Int64>()
        var next: Int64 = 0
        for _ in 0..<2_000 {
            if unfinished.isEmpty || (rng.next() % 3 != 0 && !t.isPaused(p0)) {
                if t.receive(p0, offset: next) == .process { unfinished.insert(next) }
                next += Int64(1 + rng.next() % 2)  // gaps, as compaction leaves them
            } else {
                let o = unfinished.randomElement(using: &rng)!
                unfinished.remove(o)
                t.done(p0, offset: o)
            }
            _ = t.flowChange()
            for c in t.pendingCommits(withOffsetMap: true) {
                #expect(unfinished.allSatisfy { $0 >= c.offset.rawValue }, "commit \(c.offset) passes an unfinished event")
                t.committed([c])
            }
            #expect(t.inFlight == unfinished.count)
            #expect(t.inFlight <= 20, "receiving stops while paused")
        }
    }
}

struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed &+ 0x9E37_79B9_7F4A_7C15 }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
