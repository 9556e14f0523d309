// Commits, offsets and flow control. Calls that block in librdkafka run on the consumer's
// serial blocking queue, never on the task pool (RDKafka/RDKafkaConsumer+Operations.swift).
extension KafkaConsumer {
    /// Commits `offsets` (next offset to read, i.e. last done + 1, with optional metadata)
    /// and waits for the broker's answer.
    ///
    /// Commits are applied in the order they were requested, so an earlier commit never
    /// overwrites a later one. Safe to call from ``KafkaRebalanceHandler/onRevoke``.
    /// - Throws: ``KafkaError`` for the request, or for the first partition that failed.
    public func commit(_ offsets: [TopicPartitionOffset]) async throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        try await core.commit(offsets)
    }

    /// Commits without waiting; `completion` receives the broker's answer.
    public func commitInBackground(
        _ offsets: [TopicPartitionOffset],
        completion: @escaping @Sendable (Result<Void, KafkaError>) -> Void = { _ in }
    ) {
        guard !offsets.isEmpty else { return completion(.success(())) }
        core.commitInBackground(offsets, completion: completion)
    }

    /// The group's committed offsets (and metadata) for `partitions`, as the broker has them.
    /// A partition with nothing committed has offset ``KafkaOffset/invalid``.
    public func committed(_ partitions: [TopicPartition], timeout: Duration = .seconds(10)) async throws(KafkaError) -> [TopicPartitionOffset] {
        try await core.committed(partitions, timeout: timeout)
    }

    /// The consumer's position: the offset of the next message it will fetch.
    public func position(_ partitions: [TopicPartition]) throws(KafkaError) -> [TopicPartitionOffset] {
        try core.position(partitions)
    }

    /// The low (first) and high (next to be written) offsets of a partition, asked of the broker.
    public func watermarks(for partition: TopicPartition, timeout: Duration = .seconds(10)) async throws(KafkaError) -> (low: Int64, high: Int64) {
        try await core.watermarks(for: partition, timeout: timeout)
    }

    /// For each partition, the earliest offset whose timestamp is at or after the given time
    /// (milliseconds since the epoch); ``KafkaOffset/end`` when there is none.
    ///
    /// - Important: librdkafka's mock cluster and tansu answer this wrongly; see docs/testing.md.
    public func offsets(forTimes times: [TopicPartition: Int64], timeout: Duration = .seconds(10)) async throws(KafkaError) -> [TopicPartitionOffset]
    {
        try await core.offsets(forTimes: times, timeout: timeout)
    }

    /// Moves the fetch position of assigned partitions.
    public func seek(_ offsets: [TopicPartitionOffset], timeout: Duration = .seconds(10)) async throws(KafkaError) {
        try await core.seek(offsets, timeout: timeout)
    }

    /// Stops delivering these partitions' records: those already in the consumer's queue still
    /// come; what librdkafka fetches from now on is held, and it stops fetching once it holds
    /// `queued.min.messages` (``RDKafkaPartitionQueues``). A partition assigned again starts
    /// unpaused.
    public func pause(_ partitions: [TopicPartition]) throws(KafkaError) {
        try core.flowControl(partitions, pause: true)
    }

    /// Delivers these partitions' records again, the held ones first, and fetches on.
    public func resume(_ partitions: [TopicPartition]) throws(KafkaError) {
        try core.flowControl(partitions, pause: false)
    }
}
