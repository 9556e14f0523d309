import Kafka

/// What planning a replay or an offset reset asks of the cluster. ``KafkaConsumer`` answers it;
/// tests answer it with a faithful fake, because the brokers available for tests answer
/// offsets-for-times wrongly (docs/replay.md).
public protocol OffsetLookup: Sendable {
    /// The partition numbers of `topic`, sorted.
    func partitions(of topic: String) async throws -> [Int32]
    /// The first offset still stored, and the offset the next record will get.
    func watermarks(for partition: TopicPartition) async throws -> (low: Int64, high: Int64)
    /// Per partition, the earliest offset whose timestamp is at or after the given time
    /// (milliseconds since the epoch), or ``KafkaOffset/end`` when no record is that recent.
    func offsets(forTimes times: [TopicPartition: Int64]) async throws -> [TopicPartitionOffset]
}

extension KafkaConsumer: OffsetLookup {
    public func partitions(of topic: String) async throws -> [Int32] {
        try await partitions(of: topic, timeout: .seconds(10))
    }

    public func watermarks(for partition: TopicPartition) async throws -> (low: Int64, high: Int64) {
        try await watermarks(for: partition, timeout: .seconds(10))
    }

    public func offsets(forTimes times: [TopicPartition: Int64]) async throws -> [TopicPartitionOffset] {
        try await offsets(forTimes: times, timeout: .seconds(10))
    }
}
