import Kafka

/// Where each range of a replay stands: which partitions are still being read, what a
/// message, the consumer reaching a partition's end, or a position past the end of the range
/// means for it, and where a resumed replay would start. Pure: ``Replay`` keeps one under its
/// lock and does the I/O.
///
/// A partition's read ends at the message at `end - 1`, at the partition's end when that comes
/// first (an end past the high watermark), or when the consumer's position passes the end
/// without a message there (the last offsets are gaps: compaction, transaction markers). A
/// range is finished when its read has ended and every event read is done.
public struct ReplayRanges: Sendable {
    private let ranges: [TopicPartition: ReplayRange]
    private var trackers: [TopicPartition: OffsetTracker] = [:]
    /// Partitions whose range has not been read to its end.
    public private(set) var reading: Set<TopicPartition> = []
    /// Where a partition ended when the consumer reached its end.
    private var partitionEnds: [TopicPartition: Int64] = [:]
    private var lastReceived: [TopicPartition: Int64] = [:]

    public init(_ plan: ReplayPlan) {
        ranges = Dictionary(plan.ranges.map { ($0.partition, $0) }, uniquingKeysWith: { a, _ in a })
        for range in plan.ranges {
            trackers[range.partition] = OffsetTracker(committed: range.start)
            if !range.isEmpty { reading.insert(range.partition) }
        }
    }

    /// Every range read to its end: the read is over.
    public var isReadOver: Bool { reading.isEmpty }

    /// A message at `offset` arrived: whether to process it (false: not in a range being read,
    /// or a re-delivery). The one at the range's last offset ends the partition's read.
    public mutating func receive(_ partition: TopicPartition, offset: Int64) -> Bool {
        guard let range = ranges[partition] else { return false }
        guard offset < range.end, reading.contains(partition) else {
            reading.remove(partition)
            return false
        }
        lastReceived[partition] = offset
        if offset >= min(range.end, partitionEnds[partition] ?? range.end) - 1 { reading.remove(partition) }
        return trackers[partition]?.receive(offset) == .process
    }

    /// The event at `offset` is done (sent, dead-lettered, filtered or skipped).
    public mutating func done(_ partition: TopicPartition, offset: Int64) {
        trackers[partition]?.done(offset)
    }

    /// The consumer read everything `partition` holds, up to `end`: its range ends there even
    /// if the plan's end lies beyond. When the message before `end` came already (or nothing
    /// was to be read), the read ends now; otherwise when that message arrives.
    public mutating func reachedEnd(of partition: TopicPartition, at end: Int64) {
        guard reading.contains(partition) else { return }
        partitionEnds[partition] = end
        let caughtUp = lastReceived[partition].map { $0 + 1 >= end } ?? ((trackers[partition]?.watermark ?? 0) >= end)
        if caughtUp { reading.remove(partition) }
    }

    /// The consumer's positions: a partition whose position passed the end of its range (or
    /// of the partition) without a message there has been read.
    public mutating func positions(_ positions: [TopicPartitionOffset]) {
        for p in positions where p.offset.isConcrete {
            guard let range = ranges[p.topicPartition] else { continue }
            if p.offset.rawValue >= min(range.end, partitionEnds[p.topicPartition] ?? .max) { reading.remove(p.topicPartition) }
        }
    }

    /// Whether `range` was read to its end with every event done.
    public func isFinished(_ range: ReplayRange) -> Bool {
        !reading.contains(range.partition) && (trackers[range.partition]?.uncommitted ?? 0) == 0
    }

    /// Where a resumed replay of `range` starts: the first unfinished offset or, once finished,
    /// its end (the partition's end when that came first: never past what exists).
    public func next(_ range: ReplayRange) -> Int64 {
        if isFinished(range) { return min(range.end, partitionEnds[range.partition] ?? range.end) }
        return trackers[range.partition]?.watermark ?? range.start
    }
}
