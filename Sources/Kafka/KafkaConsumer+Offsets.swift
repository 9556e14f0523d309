import CRdKafka
import Threading

// Commits, offsets and flow control. Calls that block in librdkafka run on the consumer's
// serial blocking queue, never on the cooperative pool.
extension KafkaConsumer {
    /// Commits `offsets` (next offset to read, i.e. last done + 1, with optional metadata)
    /// and waits for the broker's answer.
    ///
    /// Commits are applied in the order they were requested, so an earlier commit never
    /// overwrites a later one. Safe to call from ``KafkaRebalanceHandler/onRevoke``.
    /// - Throws: ``KafkaError`` for the request, or for the first partition that failed.
    public func commit(_ offsets: [TopicPartitionOffset]) async throws(KafkaError) {
        guard !offsets.isEmpty else { return }
        try await core.blocking { rk in Self.commitNow(rk, offsets) }
    }

    /// Commits without waiting; `completion` receives the broker's answer.
    public func commitInBackground(
        _ offsets: [TopicPartitionOffset],
        completion: @escaping @Sendable (Result<Void, KafkaError>) -> Void = { _ in }
    ) {
        guard !offsets.isEmpty else { return completion(.success(())) }
        if core.state.withLock({ $0.closed }) { return completion(.failure(.closed("the consumer"))) }
        core.blockingQueue.async { [core] in
            completion(core.client.withHandle { rk in Self.commitNow(rk, offsets) })
        }
    }

    /// Blocking commit; the commit callback is served inside `rd_kafka_commit_queue`.
    private static func commitNow(_ rk: OpaquePointer, _ offsets: [TopicPartitionOffset]) -> Result<Void, KafkaError> {
        final class Outcome {
            var error: KafkaError?
        }
        let outcome = Outcome()
        let list = RDKafkaTopicPartitionList(offsets)
        // passUnretained: `outcome` lives on this stack frame until the call below returns, and
        // with a NULL queue the callback is served inside that call.
        let err = list.withPointer { ptr in
            rd_kafka_commit_queue(rk, ptr, nil, { _, err, partitions, opaque in
                let outcome = Unmanaged<Outcome>.fromOpaque(opaque!).takeUnretainedValue()
                if err != RD_KAFKA_RESP_ERR_NO_ERROR {
                    outcome.error = KafkaError(err, context: "commit")
                } else if let partitions {
                    outcome.error = RDKafkaTopicPartitionList(borrowing: partitions).firstError(context: "commit")
                }
            }, Unmanaged.passUnretained(outcome).toOpaque())
        }
        if let error = outcome.error { return .failure(error) }
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { return .failure(KafkaError(err, context: "commit")) }
        return .success(())
    }

    /// The group's committed offsets (and metadata) for `partitions`, as the broker has them.
    /// A partition with nothing committed has offset ``KafkaOffset/invalid``.
    public func committed(_ partitions: [TopicPartition], timeout: Duration = .seconds(10)) async throws(KafkaError) -> [TopicPartitionOffset] {
        try await core.blocking { rk -> Result<[TopicPartitionOffset], KafkaError> in
            let list = RDKafkaTopicPartitionList(partitions)
            let err = list.withPointer { rd_kafka_committed(rk, $0, Int32(timeout.milliseconds)) }
            if err != RD_KAFKA_RESP_ERR_NO_ERROR { return .failure(KafkaError(err, context: "committed")) }
            if let e = list.firstError(context: "committed") { return .failure(e) }
            return .success(list.offsets)
        }
    }

    /// The consumer's position: the offset of the next message it will fetch.
    public func position(_ partitions: [TopicPartition]) throws(KafkaError) -> [TopicPartitionOffset] {
        let list = RDKafkaTopicPartitionList(partitions)
        let err = core.client.withHandle { rk in list.withPointer { rd_kafka_position(rk, $0) } }
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "position") }
        return list.offsets
    }

    /// The low (first) and high (next to be written) offsets of a partition, asked of the broker.
    public func watermarks(for partition: TopicPartition, timeout: Duration = .seconds(10)) async throws(KafkaError) -> (low: Int64, high: Int64) {
        try await core.blocking { rk -> Result<(low: Int64, high: Int64), KafkaError> in
            var low: Int64 = -1
            var high: Int64 = -1
            let err = rd_kafka_query_watermark_offsets(rk, partition.topic, partition.partition, &low, &high, Int32(timeout.milliseconds))
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { return .failure(KafkaError(err, context: "watermarks \(partition)")) }
            return .success((low, high))
        }
    }

    /// For each partition, the earliest offset whose timestamp is at or after the given time
    /// (milliseconds since the epoch); ``KafkaOffset/end`` when there is none.
    ///
    /// - Important: librdkafka's mock cluster and tansu answer this wrongly; see docs/testing.md.
    public func offsets(forTimes times: [TopicPartition: Int64], timeout: Duration = .seconds(10)) async throws(KafkaError) -> [TopicPartitionOffset] {
        try await core.blocking { rk -> Result<[TopicPartitionOffset], KafkaError> in
            let list = RDKafkaTopicPartitionList(capacity: times.count)
            for (tp, ms) in times.sorted(by: { ($0.key.topic, $0.key.partition) < ($1.key.topic, $1.key.partition) }) {
                list.add(tp, offset: KafkaOffset(ms))
            }
            let err = list.withPointer { rd_kafka_offsets_for_times(rk, $0, Int32(timeout.milliseconds)) }
            if err != RD_KAFKA_RESP_ERR_NO_ERROR { return .failure(KafkaError(err, context: "offsets for times")) }
            if let e = list.firstError(context: "offsets for times") { return .failure(e) }
            return .success(list.offsets)
        }
    }

    /// Moves the fetch position of assigned partitions.
    public func seek(_ offsets: [TopicPartitionOffset], timeout: Duration = .seconds(10)) async throws(KafkaError) {
        try await core.blocking { rk -> Result<Void, KafkaError> in
            let list = RDKafkaTopicPartitionList(offsets)
            if let error = list.withPointer({ rd_kafka_seek_partitions(rk, $0, Int32(timeout.milliseconds)) }) {
                return .failure(KafkaError(consuming: error, context: "seek"))
            }
            if let e = list.firstError(context: "seek") { return .failure(e) }
            return .success(())
        }
    }

    /// Stops fetching from these partitions (their buffered messages are still delivered).
    public func pause(_ partitions: [TopicPartition]) throws(KafkaError) {
        try flowControl(partitions, pause: true)
    }

    /// Resumes fetching from these partitions.
    public func resume(_ partitions: [TopicPartition]) throws(KafkaError) {
        try flowControl(partitions, pause: false)
    }

    private func flowControl(_ partitions: [TopicPartition], pause: Bool) throws(KafkaError) {
        guard !partitions.isEmpty else { return }
        let list = RDKafkaTopicPartitionList(partitions)
        let what = pause ? "pause" : "resume"
        let err = core.client.withHandle { rk in
            list.withPointer { pause ? rd_kafka_pause_partitions(rk, $0) : rd_kafka_resume_partitions(rk, $0) }
        }
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: what) }
        core.state.withLock { s in
            if pause { s.paused.formUnion(partitions) } else { s.paused.subtract(partitions) }
        }
        if let e = list.firstError(context: what) { throw e }
    }
}
