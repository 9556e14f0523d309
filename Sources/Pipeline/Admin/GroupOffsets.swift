import Kafka

/// A group's position in one partition.
public struct GroupOffsetRow: Sendable, Equatable {
    public var partition: TopicPartition
    /// Nil when the group has committed nothing there.
    public var committed: Int64?
    public var low: Int64
    public var high: Int64

    public init(partition: TopicPartition, committed: Int64?, low: Int64, high: Int64) {
        self.partition = partition
        self.committed = committed
        self.low = low
        self.high = high
    }

    /// Records the group has still to read. Without a commit, everything stored counts.
    public var lag: Int64 { max(0, high - max(committed ?? low, low)) }
}

/// One partition's offset before and after a reset.
public struct OffsetChange: Sendable, Equatable {
    public var partition: TopicPartition
    public var from: Int64?
    public var to: Int64
    public var notes: [String]
}

/// `pushbridge offsets show|reset`: a group's committed offsets, read and moved from outside the
/// group. `consumer` must be configured with that group's ID and must not subscribe.
public enum GroupOffsets {
    /// The committed offset, watermarks and lag of `group` in every partition of `topics`.
    public static func show(topics: [String], consumer: KafkaConsumer) async throws -> [GroupOffsetRow] {
        var rows: [GroupOffsetRow] = []
        for topic in topics {
            let partitions = try await consumer.partitions(of: topic).map { TopicPartition(topic: topic, partition: $0) }
            let committed = try await consumer.committed(partitions)
            for c in committed {
                let (low, high) = try await consumer.watermarks(for: c.topicPartition)
                rows.append(
                    GroupOffsetRow(
                        partition: c.topicPartition, committed: c.offset.isConcrete ? c.offset.rawValue : nil, low: low, high: high))
            }
        }
        return rows
    }

    /// What a reset to `position` would commit, per partition (all of `topic`'s when nil).
    public static func planReset(
        topic: String, partitions: [Int32]?, to position: OffsetPosition, consumer: KafkaConsumer
    ) async throws -> [OffsetChange] {
        let existing = try await consumer.partitions(of: topic)
        let chosen = try ReplayPlan.choosePartitions(partitions, for: position, flag: "--to-offset", existing: existing, topic: topic)
        let tps = chosen.map { TopicPartition(topic: topic, partition: $0) }
        let committed = try await consumer.committed(tps)
        var changes: [OffsetChange] = []
        for c in committed {
            let (low, high) = try await consumer.watermarks(for: c.topicPartition)
            var notes: [String] = []
            var target = try await ReplayPlan.position(position, in: c.topicPartition, low: low, high: high, lookup: consumer, notes: &notes)
            if target > high {
                // A committed offset past the end would send the group to auto.offset.reset.
                notes = ["\(target) is past the high watermark; using \(high)"]
                target = high
            }
            changes.append(
                OffsetChange(
                    partition: c.topicPartition, from: c.offset.isConcrete ? c.offset.rawValue : nil, to: target, notes: notes))
        }
        return changes
    }

    /// Commits the planned offsets for the consumer's group. The caller checks first that the
    /// group has no active members: their next commit would undo this one.
    public static func apply(_ changes: [OffsetChange], consumer: KafkaConsumer) async throws {
        try await consumer.commit(changes.map { TopicPartitionOffset($0.partition, offset: KafkaOffset($0.to)) })
    }
}
