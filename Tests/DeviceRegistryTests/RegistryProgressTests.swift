import DeviceRegistry
import Testing

@Suite("Registry progress: when a follower has caught up (pure)")
struct RegistryProgressTests {
    @Test("an end reported before the records before it are applied waits for them")
    func endBeforeRecords() {
        var p = RegistryProgress()
        p.start(partition: 0, next: nil, high: 10)
        #expect(p.lag == 10)
        // The consumer queued 10 messages, then reported the end at 10.
        p.endOfPartition(0, offset: 10, queued: 10)
        #expect(!p.caughtUp)
        p.applied(count: 6, lastOffsets: [0: 5])
        #expect(!p.caughtUp)
        #expect(p.lag == 4)
        p.applied(count: 4, lastOffsets: [0: 9])
        #expect(p.caughtUp)
        #expect(p.lag == 0)
    }

    @Test("every partition must reach its end; once caught up, new records are lag, not unreadiness")
    func allPartitionsThenLatched() {
        var p = RegistryProgress()
        p.start(partition: 0, next: 5, high: 5)
        p.start(partition: 1, next: nil, high: 3)
        p.endOfPartition(0, offset: 5, queued: 0)
        #expect(!p.caughtUp)
        #expect(p.partitions[0]?.reachedEnd == true)
        p.applied(count: 3, lastOffsets: [1: 2])
        #expect(!p.caughtUp)  // no end reported for partition 1 yet
        p.endOfPartition(1, offset: 3, queued: 3)
        #expect(p.caughtUp)
        p.endOfPartition(1, offset: 50, queued: 40)
        #expect(p.caughtUp)
        #expect(p.lag == 47)
    }

    @Test("offsets at the end without records (transaction markers) are passed, and stored with the next batch")
    func gapsAtTheEnd() {
        var p = RegistryProgress()
        p.start(partition: 0, next: nil, high: nil)
        p.applied(count: 2, lastOffsets: [0: 1])
        // Offsets 2 is a commit marker: the end is 3, no message will come for offset 2.
        p.endOfPartition(0, offset: 3, queued: 2)
        #expect(p.caughtUp)
        #expect(p.partitions[0]?.next == 3)
        #expect(p.takeUnstoredAdvances() == [0: 3])
        #expect(p.takeUnstoredAdvances().isEmpty)
    }

    @Test("a high watermark that is too low (tansu's) does not make the follower ready")
    func wrongWatermark() {
        var p = RegistryProgress()
        p.start(partition: 0, next: nil, high: 1)
        p.applied(count: 1, lastOffsets: [0: 0])
        #expect(!p.caughtUp)
        p.endOfPartition(0, offset: 10, queued: 10)
        #expect(!p.caughtUp)
        p.applied(count: 9, lastOffsets: [0: 9])
        #expect(p.caughtUp)
    }

    @Test("an empty partition is at its end at once; no partitions is never caught up")
    func emptyAndNone() {
        var none = RegistryProgress()
        none.applied(count: 0, lastOffsets: [:])
        #expect(!none.caughtUp)
        var p = RegistryProgress()
        p.start(partition: 0, next: nil, high: 0)
        p.endOfPartition(0, offset: 0, queued: 0)
        #expect(p.caughtUp)
    }

    @Test("an end before the offset the follower started from marks the partition: the topic is behind the file")
    func topicBehindFile() {
        var p = RegistryProgress()
        p.start(partition: 0, next: 500, high: 1)  // tansu's watermark: too low, not a sign
        p.start(partition: 1, next: 500, high: nil)
        #expect(p.behindFile.isEmpty)
        p.endOfPartition(0, offset: 500, queued: 0)
        p.endOfPartition(1, offset: 20, queued: 0)
        #expect(p.behindFile == [1])
    }
}
