import Kafka

/// Traced events that are done, waiting for the commit that covers them: a commit of offset
/// `o` for a partition covers every event of it below `o`. Pure; ``PushTracer`` keeps one
/// under its lock. At most ``capacity`` wait: beyond it the oldest are given up (a partition
/// lost, a replay that does not commit), their spans ended without a commit.
struct CommitWaits {
    static let capacity = 10_000
    private var waiting: [TopicPartition: [(offset: Int64, trace: EventTrace)]] = [:]
    private(set) var count = 0

    /// Returns the traces given up to make room.
    mutating func add(_ trace: EventTrace, at partition: TopicPartition, offset: Int64) -> [EventTrace] {
        waiting[partition, default: []].append((offset, trace))
        count += 1
        var dropped: [EventTrace] = []
        while count > Self.capacity, let (key, list) = waiting.min(by: { ($0.value.first?.offset ?? .max) < ($1.value.first?.offset ?? .max) }),
            !list.isEmpty
        {
            dropped.append(list[0].trace)
            waiting[key]?.removeFirst()
            if waiting[key]?.isEmpty == true { waiting[key] = nil }
            count -= 1
        }
        return dropped
    }

    /// The traces `offsets` cover, taken out.
    mutating func committed(_ offsets: [TopicPartitionOffset]) -> [(trace: EventTrace, committed: TopicPartitionOffset)] {
        var covered: [(trace: EventTrace, committed: TopicPartitionOffset)] = []
        for committed in offsets {
            guard var list = waiting[committed.topicPartition] else { continue }
            let before = list.count
            list.removeAll { entry in
                guard entry.offset < committed.offset.rawValue else { return false }
                covered.append((entry.trace, committed))
                return true
            }
            count -= before - list.count
            waiting[committed.topicPartition] = list.isEmpty ? nil : list
        }
        return covered
    }
}
