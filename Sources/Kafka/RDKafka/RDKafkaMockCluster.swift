import CRdKafka
import Threading

/// librdkafka's mock cluster (`rdkafka_mock.h`) behind ``KafkaMockCluster``: owns the cluster
/// and the client handle it lives in.
///
/// `@unchecked Sendable`: the mock API is thread-safe (requests are handed to the cluster's
/// own thread); the instance has no mutable Swift state.
final class RDKafkaMockCluster: @unchecked Sendable {
    /// The client handle that owns the cluster; destroyed after the cluster.
    private let owner: RDKafkaClient
    private let cluster: OpaquePointer
    /// `host:port,host:port,…` of the brokers.
    let bootstrapServers: String

    /// Starts a cluster of `brokers` brokers (IDs 1…N) on free loopback ports.
    init(brokers: Int) throws(KafkaError) {
        // Logs of the owner handle go to its main queue, which is never served: quiet.
        let owner = try RDKafkaClient.make(.producer, properties: [("log.queue", "true")]) { conf in
            rd_kafka_conf_set_log_cb(conf) { _, _, _, _ in }
        }
        guard let cluster = owner.withHandle({ rd_kafka_mock_cluster_new($0, Int32(brokers)) }) else {
            throw KafkaError(code: .configuration, message: "cannot create a mock cluster of \(brokers) brokers")
        }
        self.owner = owner
        self.cluster = cluster
        self.bootstrapServers = String(cString: rd_kafka_mock_cluster_bootstraps(cluster))
    }

    deinit {
        rd_kafka_mock_cluster_destroy(cluster)
    }

    /// Creates a topic (the mock has no CreateTopics API).
    func createTopic(_ name: String, partitions: Int32, replicationFactor: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_topic_create(cluster, name, partitions, replicationFactor), "create topic \(name)")
    }

    /// The next `errors.count` requests of kind `apiKey` (to any broker) fail with these errors,
    /// in order. Use `.transport` to make the broker drop the connection instead.
    func pushRequestErrors(_ apiKey: Int16, _ errors: [KafkaError.Code]) {
        var codes = errors.map { rd_kafka_resp_err_t(rawValue: $0.rawValue) }
        codes.withUnsafeMutableBufferPointer {
            rd_kafka_mock_push_request_errors_array(cluster, apiKey, $0.count, $0.baseAddress)
        }
    }

    /// Forgets errors pushed for `apiKey` that have not fired yet.
    func clearRequestErrors(_ apiKey: Int16) {
        rd_kafka_mock_clear_request_errors(cluster, apiKey)
    }

    /// Takes a broker down: its connections are closed and new ones refused.
    ///
    /// librdkafka closes the broker's listener and binds its port again at once; a child
    /// process being spawned meanwhile would keep the listener open and make that bind fail,
    /// which aborts the process (``SpawnGuard``).
    func setBrokerDown(_ brokerID: Int32) throws(KafkaError) {
        let err = SpawnGuard.withLock { rd_kafka_mock_broker_set_down(cluster, brokerID) }
        try check(err, "broker \(brokerID) down")
    }

    /// Brings a broker back up.
    func setBrokerUp(_ brokerID: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_up(cluster, brokerID), "broker \(brokerID) up")
    }

    /// Adds round-trip time to every response of a broker.
    func setRoundTripTime(_ brokerID: Int32, _ rtt: Duration) throws(KafkaError) {
        try check(rd_kafka_mock_broker_set_rtt(cluster, brokerID, Int32(rtt.milliseconds)), "broker \(brokerID) rtt")
    }

    /// Moves the group coordinator for `group` to `brokerID`.
    func setGroupCoordinator(_ group: String, brokerID: Int32) throws(KafkaError) {
        try check(rd_kafka_mock_coordinator_set(cluster, "group", group, brokerID), "coordinator for \(group)")
    }

    /// Sets a partition's leader; `nil` leaves the partition without one.
    func setPartitionLeader(topic: String, partition: Int32, brokerID: Int32?) throws(KafkaError) {
        try check(rd_kafka_mock_partition_set_leader(cluster, topic, partition, brokerID ?? -1), "leader of \(topic)[\(partition)]")
    }

    private func check(_ err: rd_kafka_resp_err_t, _ what: String) throws(KafkaError) {
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(err, context: what) }
    }
}
