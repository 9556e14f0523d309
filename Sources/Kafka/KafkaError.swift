import CRdKafka

/// An error from librdkafka or from the wrapper, keeping librdkafka's own message.
///
/// Inspect ``isRetriable`` and ``isFatal`` rather than matching codes: a retriable error
/// may succeed if the same operation is tried again; a fatal error means the client
/// instance is unusable and must be recreated.
public struct KafkaError: Error, Sendable, CustomStringConvertible {
    /// An opaque error code. librdkafka's `rd_kafka_resp_err_t` values are wrapped as-is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// librdkafka's numeric `rd_kafka_resp_err_t`, or a wrapper code below -10000.
        public let rawValue: Int32

        public init(rawValue: Int32) { self.rawValue = rawValue }
        init(_ err: rd_kafka_resp_err_t) { self.rawValue = err.rawValue }

        public static let configuration = Code(rawValue: -10_001)
        public static let closed = Code(rawValue: -10_002)
        public static let invalidArgument = Code(rawValue: -10_003)

        public static let timedOut = Code(RD_KAFKA_RESP_ERR__TIMED_OUT)
        public static let transport = Code(RD_KAFKA_RESP_ERR__TRANSPORT)
        public static let allBrokersDown = Code(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
        public static let queueFull = Code(RD_KAFKA_RESP_ERR__QUEUE_FULL)
        public static let unknownTopicOrPartition = Code(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
        public static let requestTimedOut = Code(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT)
        public static let notCoordinator = Code(RD_KAFKA_RESP_ERR_NOT_COORDINATOR)
        public static let coordinatorNotAvailable = Code(RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE)
        public static let coordinatorLoadInProgress = Code(RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS)
        public static let rebalanceInProgress = Code(RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS)
        public static let illegalGeneration = Code(RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION)
        public static let unknownMemberID = Code(RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID)
        public static let fencedInstanceID = Code(RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID)
        public static let leaderNotAvailable = Code(RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE)
        public static let notLeaderForPartition = Code(RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION)
        public static let noOffset = Code(RD_KAFKA_RESP_ERR__NO_OFFSET)

        /// librdkafka's short name, e.g. `REQUEST_TIMED_OUT`.
        public var name: String {
            switch self {
            case .configuration: return "CONFIGURATION"
            case .closed: return "CLOSED"
            case .invalidArgument: return "INVALID_ARGUMENT"
            default: return String(cString: rd_kafka_err2name(rd_kafka_resp_err_t(rawValue: rawValue)))
            }
        }

        public var description: String { name }
    }

    public let code: Code
    /// librdkafka's message (or the wrapper's), suitable for logs.
    public let message: String
    /// The operation may succeed if tried again.
    public let isRetriable: Bool
    /// The client instance is unusable; recreate it.
    public let isFatal: Bool

    public init(code: Code, message: String, isRetriable: Bool = false, isFatal: Bool = false) {
        self.code = code
        self.message = message
        self.isRetriable = isRetriable
        self.isFatal = isFatal
    }

    public var description: String {
        var flags = ""
        if isFatal { flags += ", fatal" }
        if isRetriable { flags += ", retriable" }
        return "KafkaError(\(code.name)\(flags)): \(message)"
    }
}

extension KafkaError {
    /// Codes that librdkafka reports in plain `rd_kafka_resp_err_t` form (without an
    /// `rd_kafka_error_t` that would say so) but which are known to be transient.
    static let transientCodes: Set<Code> = [
        .timedOut, .transport, .allBrokersDown, .queueFull, .requestTimedOut, .notCoordinator,
        .coordinatorNotAvailable, .coordinatorLoadInProgress, .rebalanceInProgress,
        .leaderNotAvailable, .notLeaderForPartition,
    ]

    /// From a bare response code, using librdkafka's message for it.
    init(_ err: rd_kafka_resp_err_t, context: String? = nil) {
        let code = Code(err)
        let text = String(cString: rd_kafka_err2str(err))
        self.init(
            code: code,
            message: context.map { "\($0): \(text)" } ?? text,
            isRetriable: Self.transientCodes.contains(code)
        )
    }

    /// From an `rd_kafka_error_t`, which carries its own flags. Destroys `error`.
    init(consuming error: OpaquePointer, context: String? = nil) {
        defer { rd_kafka_error_destroy(error) }
        let text = String(cString: rd_kafka_error_string(error))
        self.init(
            code: Code(rd_kafka_error_code(error)),
            message: context.map { "\($0): \(text)" } ?? text,
            isRetriable: rd_kafka_error_is_retriable(error) != 0,
            isFatal: rd_kafka_error_is_fatal(error) != 0
        )
    }

    static func closed(_ what: String) -> KafkaError {
        KafkaError(code: .closed, message: "\(what) is closed")
    }
}
