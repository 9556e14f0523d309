/// An in-process Kafka cluster from librdkafka's mock broker (`rdkafka_mock.h`).
///
/// Any client, also in another process, connects to ``bootstrapServers`` over loopback TCP.
/// It supports groups, commits with metadata, and fault injection; it does not support
/// CreateTopics (use ``createTopic(_:partitions:replicationFactor:)``) or `offsets_for_times`,
/// and keeps only a few MB per partition. Used by tests and by `pushbridge demo`.
public final class KafkaMockCluster: Sendable {
    /// Kafka protocol API keys, for ``pushRequestErrors(_:_:)``.
    public enum APIKey: Int16, Sendable {
        case produce = 0
        case fetch = 1
        case listOffsets = 2
        case metadata = 3
        case offsetCommit = 8
        case offsetFetch = 9
        case findCoordinator = 10
        case joinGroup = 11
        case heartbeat = 12
        case leaveGroup = 13
        case syncGroup = 14
        case initProducerID = 22
    }

    private let core: RDKafkaMockCluster
    /// `host:port,host:port,…` of the brokers.
    public var bootstrapServers: String { core.bootstrapServers }
    public let brokerCount: Int

    /// Starts a cluster of `brokers` brokers (IDs 1…N) on free loopback ports.
    public init(brokers: Int = 3) throws(KafkaError) {
        core = try RDKafkaMockCluster(brokers: brokers)
        brokerCount = brokers
    }

    /// Creates a topic (the mock has no CreateTopics API).
    public func createTopic(_ name: String, partitions: Int32, replicationFactor: Int32 = 1) throws(KafkaError) {
        try core.createTopic(name, partitions: partitions, replicationFactor: replicationFactor)
    }

    /// The next `errors.count` requests of kind `apiKey` (to any broker) fail with these errors,
    /// in order. Use `.transport` to make the broker drop the connection instead.
    public func pushRequestErrors(_ apiKey: APIKey, _ errors: [KafkaError.Code]) {
        core.pushRequestErrors(apiKey.rawValue, errors)
    }

    /// Forgets errors pushed for `apiKey` that have not fired yet.
    public func clearRequestErrors(_ apiKey: APIKey) {
        core.clearRequestErrors(apiKey.rawValue)
    }

    /// Takes a broker down: its connections are closed and new ones refused.
    public func setBrokerDown(_ brokerID: Int32) throws(KafkaError) {
        try core.setBrokerDown(brokerID)
    }

    /// Brings a broker back up.
    public func setBrokerUp(_ brokerID: Int32) throws(KafkaError) {
        try core.setBrokerUp(brokerID)
    }

    /// Adds round-trip time to every response of a broker.
    public func setRoundTripTime(_ brokerID: Int32, _ rtt: Duration) throws(KafkaError) {
        try core.setRoundTripTime(brokerID, rtt)
    }

    /// Moves the group coordinator for `group` to `brokerID`.
    public func setGroupCoordinator(_ group: String, brokerID: Int32) throws(KafkaError) {
        try core.setGroupCoordinator(group, brokerID: brokerID)
    }

    /// Sets a partition's leader; `nil` leaves the partition without one.
    public func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32?) throws(KafkaError) {
        try core.setPartitionLeader(topic: topic, partition: partition, brokerID: brokerID)
    }
}
