import CRdKafka

/// A consumer group as its coordinator describes it.
public struct KafkaGroupDescription: Sendable, Equatable {
    public struct Member: Sendable, Equatable {
        public var memberID: String
        public var clientID: String
        public var clientHost: String
    }

    public var group: String
    /// `Stable`, `PreparingRebalance`, `CompletingRebalance`, `Empty` or `Dead`.
    public var state: String
    public var members: [Member]

    /// Members hold partitions (or are joining): moving the group's offsets now would race them.
    public var isActive: Bool { !members.isEmpty }
}

// Cluster questions a consumer can ask: topic metadata and group descriptions. Blocking calls
// run on the consumer's serial blocking queue.
extension KafkaConsumer {
    /// The partition numbers of `topic`, sorted.
    /// - Throws: ``KafkaError/Code/unknownTopicOrPartition`` when the topic does not exist.
    public func partitions(of topic: String, timeout: Duration = .seconds(10)) async throws(KafkaError) -> [Int32] {
        try await core.blocking { rk -> Result<[Int32], KafkaError> in
            var metadata: UnsafePointer<rd_kafka_metadata_t>?
            let err = rd_kafka_metadata(rk, 1, nil, &metadata, Int32(timeout.milliseconds))
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

    /// What the group's coordinator says about `group`: its state and members.
    public func describeGroup(_ group: String, timeout: Duration = .seconds(10)) async throws(KafkaError) -> KafkaGroupDescription {
        try await core.blocking { rk -> Result<KafkaGroupDescription, KafkaError> in
            var list: UnsafePointer<rd_kafka_group_list>?
            let err = rd_kafka_list_groups(rk, group, &list, Int32(timeout.milliseconds))
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
