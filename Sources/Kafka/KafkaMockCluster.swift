import CRdKafka
import Threading

/// An in-process Kafka cluster from librdkafka's mock broker (`rdkafka_mock.h`).
///
/// Any client, also in another process, connects to ``bootstrapServers`` over loopback TCP.
/// It supports groups, commits with metadata, and fault injection; it does not support
/// CreateTopics (use ``createTopic(_:partitions:replicationFactor:)``) or `offsets_for_times`,
/// and keeps only a few MB per partition. Used by tests and by `pushbridge demo`.
///
/// `@unchecked Sendable`: the mock API is thread-safe (requests are handed to the cluster's
/// own thread); the instance has no mutable Swift state.
public final class KafkaMockCluster: @unchecked Sendable {
    /// Kafka protocol API keys, for ``pushRequestErrors(_:_:)``.
    public enum APIKey: Int16, Sendable {
        case produce = 0, fetch = 1, listOffsets = 2, metadata = 3
        case offsetCommit = 8, offsetFetch = 9, findCoordinator = 10
        case joinGroup = 11, heartbeat = 12, leaveGroup = 13, syncGroup = 14
        case initProducerID = 22
    }

    /// The client handle that owns the cluster; destroyed after the cluster.
    private let owner: RDKafkaClient
    private let cluster: OpaquePointer
    /// `host:port,host:port,…` of the brokers.
    public let bootstrapServers: String
    public let brokerCount: Int

    /// Starts a cluster of `brokers` brokers (IDs 1…N) on free loopback ports.
    public init(brokers: Int = 3) throws(KafkaError) {
        // Logs of the owner handle go to its main queue, which is never served: quiet.
        let owner = try RDKafkaClient.make(.producer, properties: [("log.queue", "true")]) { conf in
            rd_kafka_conf_set_log_cb(conf) { _, _, _, _ in }
        }
        guard let cluster = owner.withHandle({ rd_kafka_mock_cluster_new($0, Int32(brokers)) }) else {
            throw KafkaError(code: .configuration, message: "cannot create a mock cluster of \(brokers) brokers")
        }
        self.owner = owner
        self.cluster = cluster
        self.brokerCount = brokers
        self.bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
    }

    deinit {
        rd_kafka_mock_cluster_destroy(cluster)
    }

    /// Creates a topic (the mock has no CreateTopics API).
    public func createTopic(_ name: String, partitions: Int32, replicationFactor: Int32 = 1) throws(KafkaError) {
        try check(rd_kafka_mock_topic_create(cluster, name, partitions, replicationFactor), "create topic \(name)")
    }

    /// The next `errors.count` requests of kind `apiKey` (to any broker) fail with these errors,
    /// in order. Use `.transport` to make the broker drop the connection instead.
    public func pushRequestErrors(_ apiKey: APIKey, _ errors: [KafkaError.Code]) {
        var codes = errors.map { rd_kafka_resp_err_t(rawValue: $0.rawValue) }
        codes.withUnsafeMutableBufferPointer {
            rd_kafka_mock_push_request_errors_array(cluster, apiKey.rawValue, $0.count, $0.baseAddress)
        }
    }

    /// Forgets errors pushed for `apiKey` that have not fired yet.
    public func clearRequestErrors(_ apiKey: APIKey) {
        rd_kafka_mock_clear_request_errors(cluster, apiKey.rawValue)
    }

    /// Takes a broker down: its connections are closed and new ones refused.
    public func setBrokerDown(_ brokerID: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_down(cluster, brokerID), "broker \(brokerID) down")
    }

    /// Brings a broker back up.
    public func setBrokerUp(_ brokerID: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_up(cluster, brokerID), "broker \(brokerID) up")
    }

    /// Adds round-trip time to every response of a broker.
    public func setRoundTripTime(_ brokerID: Int32, _ rtt: Duration) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_rtt(cluster, brokerID, Int32(rtt.milliseconds)), "broker \(brokerID) rtt")
    }

    /// Moves the group coordinator for `group` to `brokerID`.
    public func setGroupCoordinator(_ group: String, brokerID: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_coordinator_set(cluster, "group", group, brokerID), "coordinator for \(group)")
    }

    /// Sets a partition's leader; `nil` leaves the partition without one.
    public func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32?) throws(KafkaError) {
        try check(rd_kafka_mock_partition_set_leader(cluster, topic, partition, brokerID ?? -1), "leader of \(topic)[\(partition)]")
    }

    private func check(_ err: rd_kafka_resp_err_t, _ what: String) throws(KafkaError) {
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: what) }
    }
}
