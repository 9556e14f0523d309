import Pipeline
import TestSupport
import Testing

@Suite("OffsetTracker: commit only the contiguous done prefix")
struct OffsetTrackerTests {
    @Test("in-order completion advances the watermark to last done + 1")
    func inOrder() {
        var t = OffsetTracker(committed: nil)
        for o in Int64(0)..<5 { #expect(t.receive(o) == .process) }
        t.done(0)
        t.done(1)
        #expect(t.pendingCommit(withOffsetMap: false)?.offset == 2)
        for o in Int64(2)..<5 { t.done(o) }
        #expect(t.pendingCommit(withOffsetMap: false)?.offset == 5)
        #expect(t.inFlight == 0 && t.uncommitted == 0)
    }

    @Test("a later offset finishing first never moves the commit past an unfinished one")
    func outOfOrder() {
        var t = OffsetTracker(committed: 10)
        for o in Int64(10)...14 { _ = t.receive(o) }
        t.done(12)
        t.done(14)
        #expect(t.pendingCommit(withOffsetMap: false) == nil, "10 is still in flight: nothing new to commit")
        t.done(10)
        #expect(t.pendingCommit(withOffsetMap: false)?.offset == 11)
        t.done(11)
        #expect(t.pendingCommit(withOffsetMap: false)?.offset == 13)
        t.done(13)
        #expect(t.pendingCommit(withOffsetMap: false)?.offset == 15)
    }

    @Test("gaps in offsets (compaction, transaction markers) do not block the watermark")
    func gaps() {
        var t = OffsetTracker(committed: 100)
        #expect(t.receive(105) == .process)
        #expect(t.receive(109) == .process)
        t.done(109)
        #expect(t.watermark == 105)
        t.done(105)
        #expect(t.pendingCommit(withOffsetMap: false)?.offset == 110)
    }

    @Test("re-delivered offsets at or below what was seen are ignored")
    func stale() {
        var t = OffsetTracker(committed: 50)
        #expect(t.receive(49) == .ignoreStale)
        #expect(t.receive(50) == .process)
        #expect(t.receive(50) == .ignoreStale)
        t.done(50)
        #expect(t.receive(50) == .ignoreStale)
        #expect(t.receive(51) == .process)
    }

    @Test("done for unknown or repeated offsets changes nothing")
    func unknownDone() {
        var t = OffsetTracker(committed: 0)
        _ = t.receive(0)
        t.done(7)
        t.done(0)
        t.done(0)
        #expect(t.doneSinceCommit == 1)
        #expect(t.pendingCommit(withOffsetMap: false)?.offset == 1)
    }

    @Test("after a commit is acknowledged nothing is pending until more is done")
    func committedClearsPending() {
        var t = OffsetTracker(committed: 0)
        _ = t.receive(0)
        _ = t.receive(1)
        t.done(0)
        let c = t.pendingCommit(withOffsetMap: false)!
        t.committed(c.offset, metadata: c.metadata)
        #expect(t.pendingCommit(withOffsetMap: false) == nil)
        #expect(t.doneSinceCommit == 0)
        t.committed(0, metadata: nil)  // a late, older acknowledgement cannot move it back
        #expect(t.committedOffset == 1)
    }

    @Test("the offset map records done offsets beyond the watermark; a restart skips them")
    func offsetMapRestart() {
        var before = OffsetTracker(committed: 1200)
        for o in Int64(1200)...1210 { _ = before.receive(o) }
        for o: Int64 in [1203, 1204, 1205, 1209] { before.done(o) }
        let commit = before.pendingCommit(withOffsetMap: true)!
        #expect(commit.offset == 1200)
        #expect(commit.metadata == "pb1:1200:3-5,9")

        // The worker dies; the next owner restores from the committed offset and metadata.
        var after = OffsetTracker(committed: commit.offset, metadata: commit.metadata)
        var processed: [Int64] = []
        for o in Int64(1200)...1210 where after.receive(o) == .process { processed.append(o) }
        #expect(processed == [1200, 1201, 1202, 1206, 1207, 1208, 1210])
        for o in processed { after.done(o) }
        #expect(after.pendingCommit(withOffsetMap: true)?.offset == 1211)
    }

    @Test("a map for another base, another format or cut short is ignored (plain watermark)")
    func staleOrForeignMap() {
        #expect(OffsetMap.decode("pb1:1199:3-5", base: 1200) == nil)
        #expect(OffsetMap.decode("something else", base: 1200) == nil)
        #expect(OffsetMap.decode("pb1:1200:3-", base: 1200) == nil)
        #expect(OffsetMap.decode(nil, base: 1200) == nil)
        var t = OffsetTracker(committed: 1200, metadata: "pb1:1199:1-5")
        #expect(t.receive(1201) == .process)
    }

    @Test("an offset map over the metadata limit is left out")
    func oversizeMap() {
        let done = stride(from: Int64(2), to: 20_000, by: 2).map { $0 }
        #expect(OffsetMap.encode(done: done, base: 0, maxBytes: 4000) == nil)
        #expect(OffsetMap.encode(done: [1, 2, 3, 7], base: 0) == "pb1:0:1-3,7")
    }

    @Test("random completion orders: the watermark only ever covers done offsets", arguments: [1, 2, 3, 4, 5])
    func randomOrders(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var t = OffsetTracker(committed: 0)
        var pending: [Int64] = []
        var done = Set<Int64>()
        var next: Int64 = 0
        var lastWatermark: Int64 = 0
        for _ in 0..<5_000 {
            if pending.isEmpty || rng.next() % 3 != 0 {
                next += Int64(rng.next() % 3) + 1  // with gaps
                #expect(t.receive(next) == .process)
                pending.append(next)
            } else {
                let o = pending.remove(at: Int(rng.next() % UInt64(pending.count)))
                t.done(o)
                done.insert(o)
            }
            let w = t.watermark ?? 0
            #expect(w >= lastWatermark, "never moves back")
            #expect(pending.allSatisfy { $0 >= w }, "never past an unfinished offset")
            lastWatermark = w
        }
        for o in pending { t.done(o) }
        #expect(t.pendingCommit(withOffsetMap: false)?.offset == next + 1)
    }
}
