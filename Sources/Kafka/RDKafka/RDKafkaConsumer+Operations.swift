import CRdKafka

// The consumer's librdkafka calls behind KafkaConsumer's public API: subscription and
// assignment, commits and offsets, flow control, cluster questions. Calls that block in
// librdkafka run on the serial blocking queue (`blocking(_:)`), never on the task pool.
extension RDKafkaConsumer {
    // MARK: Subscription

    func subscribe(topics: [String]) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(capacity: topics.count)
        for topic in topics {
            list.add(TopicPartition(topic: topic, partition: crdkafka_partition_unassigned()), offset: .invalid)
        }
        let err = client.withHandle { rk in list.withPointer { rd_kafka_subscribe(rk, $0) } }
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "subscribe") }
    }

    func assign(_ partitions: [TopicPartitionOffset]) throws(KafkaError) {
        let list = RDKafkaTopicPartitionList(partitions)
        let err = client.withHandle { rk in list.withPointer { rd_kafka_assign(rk, $0) } }
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "assign") }
        state.withLock { $0.assignment = Set(partitions.map(\.topicPartition)) }
    }

    // MARK: Commits and offsets

    func commit(_ offsets: [TopicPartitionOffset]) async throws(KafkaError) {
        try await blocking { rk in Self.commitNow(rk, offsets) }
    }

    func commitInBackground(_ offsets: [TopicPartitionOffset], completion: @escaping @Sendable (Result<Void, KafkaError>) -> Void) {
        if state.withLock({ $0.closed }) { return completion(.failure(.closed("the consumer"))) }
        blockingQueue.async { [client] in
            completion(client!.withHandle { rk in Self.commitNow(rk, offsets) })
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
            rd_kafka_commit_queue(
                rk, ptr, nil,
                { _, err, partitions, opaque in
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

    func committed(_ partitions: [TopicPartition], timeout: Duration) async throws(KafkaError) -> [TopicPartitionOffset] {
        try await blocking(timeout: timeout) { rk, sliceMs -> Result<[TopicPartitionOffset], KafkaError> in
            let list = RDKafkaTopicPartitionList(partitions)
            let err = list.withPointer { rd_kafka_committed(rk, $0, sliceMs) }
            if err != RD_KAFKA_RESP_ERR_NO_ERROR { return .failure(KafkaError(err, context: "committed")) }
            if let e = list.firstError(context: "committed") { return .failure(e) }
            return .success(list.offsets)
        }
    }

    func position(_ partitions: [TopicPartition]) throws(KafkaError) -> [TopicPartitionOffset] {
        let list = RDKafkaTopicPartitionList(partitions)
        let err = client.withHandle { rk in list.withPointer { rd_kafka_position(rk, $0) } }
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: "position") }
        return list.offsets
    }

    func watermarks(for partition: TopicPartition, timeout: Duration) async throws(KafkaError) -> (low: Int64, high: Int64) {
        try await blocking(timeout: timeout) { rk, sliceMs -> Result<(low: Int64, high: Int64), KafkaError> in
            var low: Int64 = -1
            var high: Int64 = -1
            let err = rd_kafka_query_watermark_offsets(rk, partition.topic, partition.partition, &low, &high, sliceMs)
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { return .failure(KafkaError(err, context: "watermarks \(partition)")) }
            return .success((low, high))
        }
    }

    func offsets(forTimes times: [TopicPartition: Int64], timeout: Duration) async throws(KafkaError) -> [TopicPartitionOffset] {
        try await blocking(timeout: timeout) { rk, sliceMs -> Result<[TopicPartitionOffset], KafkaError> in
            let list = RDKafkaTopicPartitionList(capacity: times.count)
            for (tp, ms) in times.sorted(by: { ($0.key.topic, $0.key.partition) < ($1.key.topic, $1.key.partition) }) {
                list.add(tp, offset: KafkaOffset(ms))
            }
            let err = list.withPointer { rd_kafka_offsets_for_times(rk, $0, sliceMs) }
            if err != RD_KAFKA_RESP_ERR_NO_ERROR { return .failure(KafkaError(err, context: "offsets for times")) }
            if let e = list.firstError(context: "offsets for times") { return .failure(e) }
            return .success(list.offsets)
        }
    }

    func seek(_ offsets: [TopicPartitionOffset], timeout: Duration) async throws(KafkaError) {
        try await blocking(timeout: timeout) { rk, sliceMs -> Result<Void, KafkaError> in
            let list = RDKafkaTopicPartitionList(offsets)
            if let error = list.withPointer({ rd_kafka_seek_partitions(rk, $0, sliceMs) }) {
                return .failure(KafkaError(consuming: error, context: "seek"))
            }
            if let e = list.firstError(context: "seek") { return .failure(e) }
            return .success(())
        }
    }

    // MARK: Flow control

    /// Holds or releases the partitions' fetched messages (``RDKafkaPartitionQueues``).
    func flowControl(_ partitions: [TopicPartition], pause: Bool) throws(KafkaError) {
        guard !partitions.isEmpty else { return }
        let missing = client.withHandle { rk in
            pause ? RDKafkaPartitionQueues.hold(rk, partitions) : RDKafkaPartitionQueues.release(rk, partitions)
        }
        if let first = missing.first {
            throw KafkaError(code: .unknownTopicOrPartition, message: "\(pause ? "pause" : "resume"): no such partition \(first)")
        }
    }

    // MARK: Cluster questions

    func partitions(of topic: String, timeout: Duration) async throws(KafkaError) -> [Int32] {
        try await blocking(timeout: timeout) { rk, sliceMs -> Result<[Int32], KafkaError> in
            var metadata: UnsafePointer<rd_kafka_metadata_t>?
            let err = rd_kafka_metadata(rk, 1, nil, &metadata, sliceMs)
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
                return .failure(KafkaError(err, context: "metadata"))
            }
            defer { rd_kafka_metadata_destroy(metadata) }
            let topics = UnsafeBufferPointer(start: metadata.pointee.topics, count: Int(metadata.pointee.topic_cnt))
            guard let entry = topics.first(where: { String(cString: $0.topic) == topic }) else {
                return .failure(KafkaError(code: .unknownTopicOrPartition, message: "topic \(topic) does not exist"))
            }
            if entry.err != RD_KAFKA_RESP_ERR_NO_ERROR { return .failure(KafkaError(entry.err, context: "metadata \(topic)")) }
            let partitions = UnsafeBufferPointer(start: entry.partitions, count: Int(entry.partition_cnt))
            return .success(partitions.map(\.id).sorted())
        }
    }

    func describeGroup(_ group: String, timeout: Duration) async throws(KafkaError) -> KafkaGroupDescription {
        try await blocking(timeout: timeout) { rk, sliceMs -> Result<KafkaGroupDescription, KafkaError> in
            var list: UnsafePointer<rd_kafka_group_list>?
            let err = rd_kafka_list_groups(rk, group, &list, sliceMs)
            guard err == RD_KAFKA_RESP_ERR_NO_ERROR, let list else {
                return .failure(KafkaError(err, context: "describe group \(group)"))
            }
            defer { rd_kafka_group_list_destroy(list) }
            let groups = UnsafeBufferPointer(start: list.pointee.groups, count: Int(list.pointee.group_cnt))
            guard let info = groups.first(where: { String(cString: $0.group) == group }) else {
                return .success(KafkaGroupDescription(group: group, state: "Dead", members: []))
            }
            if info.err != RD_KAFKA_RESP_ERR_NO_ERROR { return .failure(KafkaError(info.err, context: "describe group \(group)")) }
            let members = UnsafeBufferPointer(start: info.members, count: Int(info.member_cnt)).map { m in
                KafkaGroupDescription.Member(
                    memberID: String(cString: m.member_id), clientID: String(cString: m.client_id),
                    clientHost: String(cString: m.client_host))
            }
            return .success(KafkaGroupDescription(group: group, state: String(cString: info.state), members: members))
        }
    }
}
