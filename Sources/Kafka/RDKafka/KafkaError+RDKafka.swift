import CRdKafka

// KafkaError from librdkafka's error codes and `rd_kafka_error_t`: the only part of KafkaError
// that needs the C library.
extension KafkaError.Code {
    init(_ err: rd_kafka_resp_err_t) { self.init(rawValue: err.rawValue) }

    public static let timedOut = Self(RD_KAFKA_RESP_ERR__TIMED_OUT)
    public static let transport = Self(RD_KAFKA_RESP_ERR__TRANSPORT)
    public static let allBrokersDown = Self(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
    public static let queueFull = Self(RD_KAFKA_RESP_ERR__QUEUE_FULL)
    public static let unknownTopicOrPartition = Self(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
    public static let requestTimedOut = Self(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT)
    public static let notCoordinator = Self(RD_KAFKA_RESP_ERR_NOT_COORDINATOR)
    public static let coordinatorNotAvailable = Self(RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE)
    public static let coordinatorLoadInProgress = Self(RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS)
    public static let rebalanceInProgress = Self(RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS)
    public static let illegalGeneration = Self(RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION)
    public static let unknownMemberID = Self(RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID)
    public static let fencedInstanceID = Self(RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID)
    public static let leaderNotAvailable = Self(RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE)
    public static let notLeaderForPartition = Self(RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION)
    public static let noOffset = Self(RD_KAFKA_RESP_ERR__NO_OFFSET)
    /// SASL: the broker refused the credentials or the mechanism (librdkafka's local code; the
    /// broker's SASL_AUTHENTICATION_FAILED is reported as this too).
    public static let authentication = Self(RD_KAFKA_RESP_ERR__AUTHENTICATION)
    /// TLS: the handshake failed, e.g. the broker's certificate could not be verified.
    public static let ssl = Self(RD_KAFKA_RESP_ERR__SSL)
    public static let topicAuthorizationFailed = Self(RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED)
    public static let groupAuthorizationFailed = Self(RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED)
    public static let clusterAuthorizationFailed = Self(RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED)

    /// librdkafka's short name for the code, e.g. `REQUEST_TIMED_OUT`.
    var librdkafkaName: String {
        String(cString: rd_kafka_err2name(rd_kafka_resp_err_t(rawValue: rawValue)))
    }
}

extension KafkaError {
    /// From a bare response code, using librdkafka's message for it.
    init(_ err: rd_kafka_resp_err_t, context: String? = nil) {
        let code = Code(err)
        let text = String(cString: rd_kafka_err2str(err))
        self.init(
            code: code,
            message: context.map { "\($0): \(text)" } ?? text,
            isRetryable: Self.transientCodes.contains(code)
        )
    }

    /// From an `rd_kafka_error_t`, which carries its own flags. Destroys `error`.
    init(consuming error: OpaquePointer, context: String? = nil) {
        defer { rd_kafka_error_destroy(error) }
        let text = String(cString: rd_kafka_error_string(error))
        self.init(
            code: Code(rd_kafka_error_code(error)),
            message: context.map { "\($0): \(text)" } ?? text,
            isRetryable: rd_kafka_error_is_retriable(error) != 0,
            isFatal: rd_kafka_error_is_fatal(error) != 0
        )
    }
}
