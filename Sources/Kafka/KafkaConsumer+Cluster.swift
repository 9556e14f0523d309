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
// run on the consumer's serial blocking queue (RDKafka/RDKafkaConsumer+Operations.swift).
extension KafkaConsumer {
    /// The partition numbers of `topic`, sorted.
    /// - Throws: ``KafkaError/Code/unknownTopicOrPartition`` when the topic does not exist.
    public func partitions(of topic: String, timeout: Duration = .seconds(10)) async throws(KafkaError) -> [Int32] {
        try await core.partitions(of: topic, timeout: timeout)
    }

    /// What the group's coordinator says about `group`: its state and members.
    public func describeGroup(_ group: String, timeout: Duration = .seconds(10)) async throws(KafkaError) -> KafkaGroupDescription {
        try await core.describeGroup(group, timeout: timeout)
    }
}
