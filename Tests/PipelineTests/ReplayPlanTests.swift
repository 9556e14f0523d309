import Kafka
import Pipeline
import Testing

/// A topic's partitions as (offset, timestamp) records, answering like a Kafka broker does.
/// Both brokers available for tests answer offsets-for-times wrongly (brokers.md), so timestamp
/// resolution is tested against this.
struct FakeTopic: OffsetLookup {
    struct Partition {
        /// (offset, timestamp in ms), offsets increasing; gaps allowed (compaction).
        var records: [(offset: Int64, timestamp: Int64)]
        /// First offset still stored (retention moves it up).
        var low: Int64
        /// The offset the next record will get.
        var high: Int64
    }

    let topic: String
    let partitions: [Int32: Partition]

    func partitions(of topic: String) async throws -> [Int32] {
        guard topic == self.topic else { throw KafkaError(code: .unknownTopicOrPartition, message: "no topic \(topic)") }
        return partitions.keys.sorted()
    }

    func watermarks(for partition: TopicPartition) async throws -> (low: Int64, high: Int64) {
        let p = partitions[partition.partition]!
        return (p.low, p.high)
    }

    /// Kafka's ListOffsets by timestamp: the earliest stored offset whose timestamp is at or after
    /// the target, or -1 (end) when there is none. Timestamps need not be monotonic (producers
    /// set them), so the earliest *offset* with a recent-enough timestamp is taken, as the broker's
    /// time index does.
    func offsets(forTimes times: [TopicPartition: Int64]) async throws -> [TopicPartitionOffset] {
        times.map { tp, ms in
            let p = partitions[tp.partition]!
            let hit = p.records.first { $0.offset >= p.low && $0.timestamp >= ms }
            return TopicPartitionOffset(tp, offset: hit.map { KafkaOffset($0.offset) } ?? .end)
        }
    }
}

@Suite("Replay plans: offsets, times, retention (against a faithful fake)")
struct ReplayPlanTests {
    /// Partition 0: offsets 0..<10 at t = 1000, 1100, …, 1900. Partition 1: offsets 0..<6 at
    /// t = 1050, 1250, …; retention deleted offsets 0 and 1.
    let fake = FakeTopic(
        topic: "events",
        partitions: [
            0: .init(records: (0..<10).map { (Int64($0), 1000 + Int64($0) * 100) }, low: 0, high: 10),
            1: .init(records: (0..<6).map { (Int64($0), 1050 + Int64($0) * 200) }, low: 2, high: 6),
        ])

    func plan(_ from: OffsetPosition, _ to: OffsetPosition? = nil, partitions: [Int32]? = nil) async throws -> [Int32: Range<Int64>] {
        let plan = try await ReplayPlan.resolve(topic: "events", partitions: partitions, from: from, to: to, lookup: fake)
        return Dictionary(uniqueKeysWithValues: plan.ranges.map { ($0.partition.partition, $0.start..<$0.end) })
    }

    @Test("--from-beginning starts at the first stored record; no end means the high watermark")
    func beginning() async throws {
        #expect(try await plan(.earliest) == [0: 0..<10, 1: 2..<6])
    }

    @Test("--from-time resolves per partition to the first record at or after it")
    func fromTime() async throws {
        // 1450: partition 0 → offset 5 (t=1500); partition 1 → offset 2 (t=1450, exactly).
        #expect(try await plan(.time(milliseconds: 1450)) == [0: 5..<10, 1: 2..<6])
        // Between records: the next one.
        #expect(try await plan(.time(milliseconds: 1501)) == [0: 6..<10, 1: 3..<6])
    }

    @Test("a time before every record starts at the first stored one; after every record, the range is empty")
    func timeOutside() async throws {
        #expect(try await plan(.time(milliseconds: 0)) == [0: 0..<10, 1: 2..<6])
        let late = try await ReplayPlan.resolve(topic: "events", partitions: nil, from: .time(milliseconds: 99_999), to: nil, lookup: fake)
        #expect(late.ranges.filter { !$0.isEmpty }.isEmpty)
        #expect(late.total == 0)
        #expect(late.ranges[0].notes.contains { $0.contains("no record at or after") })
    }

    @Test("--to-time is exclusive: the first record at or after it is not replayed")
    func toTime() async throws {
        #expect(try await plan(.time(milliseconds: 1200), .time(milliseconds: 1500)) == [0: 2..<5, 1: 2..<3])
        // An end after every record: up to the high watermark.
        #expect(try await plan(.time(milliseconds: 1200), .time(milliseconds: 99_999)) == [0: 2..<10, 1: 2..<6])
    }

    @Test("timestamps out of order: the earliest offset with a recent-enough timestamp wins")
    func unorderedTimestamps() async throws {
        let skewed = FakeTopic(
            topic: "events",
            partitions: [
                0: .init(records: [(0, 1000), (1, 3000), (2, 2000), (3, 4000)], low: 0, high: 4)
            ])
        let plan = try await ReplayPlan.resolve(topic: "events", partitions: nil, from: .time(milliseconds: 2000), to: nil, lookup: skewed)
        #expect(plan.ranges.map { $0.start..<$0.end } == [1..<4], "offset 2 has t=2000, but offset 1 (t=3000) comes first")
    }

    @Test("an offset before retention starts at the first stored record, and says so")
    func retention() async throws {
        let plan = try await ReplayPlan.resolve(topic: "events", partitions: [1], from: .offset(0), to: nil, lookup: fake)
        #expect(plan.ranges.map { $0.start..<$0.end } == [2..<6])
        #expect(plan.ranges[0].notes.contains { $0.contains("deleted by retention") })
    }

    @Test("per-partition offsets choose the partitions; each range ends where asked")
    func perPartition() async throws {
        #expect(try await plan(.partitionOffsets([0: 3]), .partitionOffsets([0: 7])) == [0: 3..<7])
        #expect(try await plan(.partitionOffsets([0: 3, 1: 4]), .offset(5)) == [0: 3..<5, 1: 4..<5])
        // An end before the start is an empty range, not an error, per partition.
        #expect(try await plan(.partitionOffsets([0: 8]), .offset(5)) == [0: 8..<8])
    }

    @Test("an end past the high watermark is kept and noted (the read stops at the partition's end)")
    func pastHighWatermark() async throws {
        let plan = try await ReplayPlan.resolve(topic: "events", partitions: [0], from: .offset(4), to: .offset(50), lookup: fake)
        #expect(plan.ranges.map { $0.start..<$0.end } == [4..<50])
        #expect(plan.ranges[0].notes.contains { $0.contains("past the high watermark 10") })
    }

    @Test("bad requests are refused with a reason")
    func invalid() async throws {
        await #expect(throws: ReplayPlan.Invalid("--to-offset 3 is before --from-offset 5")) {
            try await plan(.offset(5), .offset(3))
        }
        await #expect(throws: ReplayPlan.Invalid("--to-time 1970-01-01T00:00:01.000Z is before --from-time 1970-01-01T00:00:02.000Z")) {
            try await plan(.time(milliseconds: 2000), .time(milliseconds: 1000))
        }
        await #expect(throws: ReplayPlan.Invalid("topic events has partitions 0, 1; no partition 7")) {
            try await plan(.earliest, partitions: [7])
        }
        await #expect(throws: ReplayPlan.Invalid("--from-offset names no offset for partition 1")) {
            try await plan(.partitionOffsets([0: 1]), partitions: [0, 1])
        }
        await #expect(throws: ReplayPlan.Invalid("--to-offset names no offset for partition 1")) {
            try await plan(.partitionOffsets([0: 1, 1: 2]), .partitionOffsets([0: 5]))
        }
        await #expect(throws: KafkaError.self) {
            _ = try await ReplayPlan.resolve(topic: "nope", partitions: nil, from: .earliest, to: nil, lookup: fake)
        }
    }
}

@Suite("Replay progress (pure)")
struct ReplayProgressTests {
    @Test("counts, rate, ETA and the progress line")
    func line() {
        var p = ReplayProgress(planned: 10_000)
        for _ in 0..<2_400 { p.record(.sent(messages: 2)) }
        for _ in 0..<50 { p.record(.skipped) }
        for _ in 0..<40 { p.record(.filtered) }
        for _ in 0..<10 { p.record(.deadLettered, invalidations: 1) }
        p.record(.unfinished)
        #expect(p.done == 2_500)
        #expect(p.unfinished == 1)
        #expect(p.rate(elapsedSeconds: 2) == 1_250)
        #expect(p.etaSeconds(elapsedSeconds: 2) == 6)
        #expect(
            p.line(elapsedSeconds: 2) == "replay: 2,500/10,000 (25%) · 1,250 events/s · ETA 0:06 · "
                + "sent 2,400 (4,800 messages) · skipped 50 · filtered 40 · dead-lettered 10 · invalidated 10 · unfinished 1")
    }

    @Test("too old events are done, counted on their own, and shown once there is one")
    func tooOld() {
        var p = ReplayProgress(planned: 10)
        p.record(.sent(messages: 1))
        #expect(!p.counts.contains("too old"))
        p.record(.tooOld)
        p.record(.tooOld)
        #expect(p.done == 3 && p.tooOld == 2 && p.skipped == 0 && p.deadLettered == 0)
        #expect(p.counts == "sent 1 (1 messages) · skipped 0 · filtered 0 · dead-lettered 0 · too old 2 · invalidated 0")
    }

    @Test("events handed to the rules stage (cap, dedup) are done, counted on their own, and shown once there is one")
    func handedToRules() {
        var p = ReplayProgress(planned: 10)
        p.record(.sent(messages: 1))
        #expect(!p.counts.contains("rules stage"))
        p.record(.handedToRules)
        #expect(p.done == 2 && p.handedToRules == 1 && p.sent == 1 && p.skipped == 0)
        #expect(p.counts == "sent 1 (1 messages) · skipped 0 · handed to the rules stage 1 · filtered 0 · dead-lettered 0 · invalidated 0")
    }

    @Test("before anything is done the ETA is unknown; long ETAs show hours")
    func eta() {
        var p = ReplayProgress(planned: 1_000_000)
        #expect(p.etaSeconds(elapsedSeconds: 1) == nil)
        #expect(p.line(elapsedSeconds: 1).contains("ETA ?"))
        for _ in 0..<100 { p.record(.sent(messages: 1)) }
        #expect(ReplayProgress.clock(p.etaSeconds(elapsedSeconds: 1)!) == "2:46:39")
        #expect(ReplayProgress.grouped(1_234_567) == "1,234,567")
        #expect(ReplayProgress.grouped(12) == "12")
    }
}
