import Kafka
import Pipeline
import TestSupport
import Testing

@Suite("PartitionTable's flow control looks at the touched partition only, and decides as a look at every partition would")
struct PartitionTableFlowTests {
    /// A table told which partition an event touched, and one that looks at every partition
    /// each time, driven by the same seeded events, assignments and revokes: the same pauses
    /// and resumes, step by step.
    @Test("random events over 1-12 partitions, tight limits: every flow change the same as a full look (seeded)", arguments: [UInt64(1), 2, 3, 4])
    func sameAsFullScan(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        func choose(_ n: Int) -> Int { Int(rng.next() % UInt64(n)) }
        let limits = PartitionTable.Limits(maxEventsInFlight: 40, partitionBuffer: 8)
        var (fast, full) = (PartitionTable(limits: limits), PartitionTable(limits: limits))
        var next: [TopicPartition: Int64] = [:]
        var inFlight: [TopicPartition: [Int64]] = [:]
        var (changes, steps) = (0, 0)
        for _ in 0..<20_000 {
            let p = TopicPartition(topic: "events", partition: Int32(choose(12)))
            switch choose(100) {
            case 0..<2:
                fast.assign(p, committed: next[p] ?? 0, metadata: nil)
                full.assign(p, committed: next[p] ?? 0, metadata: nil)
                #expect(fast.flowChange() == full.flowChange())
            case 2..<3:
                fast.remove([p])
                full.remove([p])
                inFlight[p] = nil
                #expect(fast.flowChange() == full.flowChange())
            case 3..<55:
                guard fast.tracker(p) != nil, !fast.isPaused(p) else { continue }
                let offset = next[p, default: 0]
                next[p] = offset + 1
                #expect(fast.receive(p, offset: offset) == full.receive(p, offset: offset))
                inFlight[p, default: []].append(offset)
                let change = fast.flowChange(after: p)
                #expect(change == full.flowChange(), "step \(steps): \(p) received")
                changes += change.isEmpty ? 0 : 1
            default:
                guard var offsets = inFlight[p], !offsets.isEmpty else { continue }
                let offset = offsets.remove(at: choose(offsets.count))
                inFlight[p] = offsets
                fast.done(p, offset: offset)
                full.done(p, offset: offset)
                let change = fast.flowChange(after: p)
                #expect(change == full.flowChange(), "step \(steps): \(p) done")
                changes += change.isEmpty ? 0 : 1
            }
            steps += 1
            #expect(fast.pausedPartitions == full.pausedPartitions)
        }
        #expect(changes > 200, "the limits were crossed often enough to tell: \(changes) flow changes")
    }
}
