import Kafka
import Pipeline
import Testing

/// Where a replay's ranges stand (when a partition's read ends, where a resume starts), without
/// I/O. The same against real brokers: ReplayEndToEndTests.
@Suite("ReplayRanges: the end of each range, and where a resume starts")
struct ReplayRangesTests {
    let p0 = TopicPartition(topic: "events", partition: 0)
    let p1 = TopicPartition(topic: "events", partition: 1)

    func plan(_ ranges: ReplayRange...) -> ReplayPlan { ReplayPlan(ranges: ranges) }

    /// Hands `offsets` of `partition` to `r` in order: whether each is to be processed.
    func receive(_ r: inout ReplayRanges, _ partition: TopicPartition, _ offsets: Int64...) -> [Bool] {
        offsets.map { r.receive(partition, offset: $0) }
    }

    @Test("the message at end - 1 ends the partition's read; the range is finished once every event is done")
    func lastMessageEndsRead() {
        let range = ReplayRange(partition: p0, start: 10, end: 13)
        var r = ReplayRanges(plan(range))
        #expect(receive(&r, p0, 10, 11) == [true, true])
        #expect(!r.isReadOver)
        #expect(receive(&r, p0, 12) == [true])
        #expect(r.isReadOver)
        r.done(p0, offset: 10)
        r.done(p0, offset: 12)  // out of order: 11 is still under way
        #expect(!r.isFinished(range) && r.next(range) == 11, "a resume starts at the first unfinished event")
        r.done(p0, offset: 11)
        #expect(r.isFinished(range) && r.next(range) == 13)
    }

    @Test("messages outside a range, past its end, or again are not processed")
    func notProcessed() {
        var r = ReplayRanges(plan(ReplayRange(partition: p0, start: 0, end: 5), ReplayRange(partition: p1, start: 0, end: 5)))
        #expect(receive(&r, TopicPartition(topic: "other", partition: 0), 0) == [false])
        #expect(receive(&r, p0, 0, 0) == [true, false], "a re-delivery is not processed again")
        #expect(receive(&r, p1, 7) == [false], "past the end: the read of p1 ends")
        #expect(r.reading == [p0])
    }

    @Test("an end past the partition's end: the read ends where the consumer found the partition's end")
    func partitionEndBeforeRangeEnd() {
        let range = ReplayRange(partition: p0, start: 0, end: 100)
        var r = ReplayRanges(plan(range))
        #expect(receive(&r, p0, 0, 1) == [true, true])
        r.reachedEnd(of: p0, at: 3)  // offset 2 is still on its way
        #expect(!r.isReadOver)
        #expect(receive(&r, p0, 2) == [true])
        #expect(r.isReadOver)
        for o in Int64(0)...2 { r.done(p0, offset: o) }
        #expect(r.isFinished(range) && r.next(range) == 3, "never past what exists")
    }

    @Test("nothing to read (the range starts at the partition's end): the read ends at the end-of-partition")
    func nothingToRead() {
        let range = ReplayRange(partition: p0, start: 5, end: 50)
        var r = ReplayRanges(plan(range))
        r.reachedEnd(of: p0, at: 5)
        #expect(r.isReadOver && r.isFinished(range) && r.next(range) == 5)
    }

    @Test("the last offsets are gaps (compaction): a position past the end ends the read without a message there")
    func gapsAtTheEnd() {
        let range = ReplayRange(partition: p0, start: 0, end: 10)
        var r = ReplayRanges(plan(range))
        #expect(receive(&r, p0, 0, 7) == [true, true])
        r.positions([TopicPartitionOffset(p0, offset: 9)])
        #expect(!r.isReadOver, "9 may still come")
        r.positions([TopicPartitionOffset(p0, offset: .invalid)])
        #expect(!r.isReadOver, "no position yet says nothing")
        r.positions([TopicPartitionOffset(p0, offset: 10)])
        #expect(r.isReadOver)
        r.done(p0, offset: 0)
        r.done(p0, offset: 7)
        #expect(r.isFinished(range) && r.next(range) == 10)
    }

    @Test("an empty range is never read, and is finished at once")
    func emptyRange() {
        let range = ReplayRange(partition: p0, start: 4, end: 4)
        let r = ReplayRanges(plan(range))
        #expect(r.isReadOver && r.isFinished(range) && r.next(range) == 4)
    }
}
