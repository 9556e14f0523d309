/// An error from librdkafka or from the wrapper, keeping librdkafka's own message.
///
/// Inspect ``isRetryable`` and ``isFatal`` rather than matching codes: a retryable error
/// may succeed if the same operation is tried again; a fatal error means the client
/// instance is unusable and must be recreated.
public struct KafkaError: Error, Sendable, CustomStringConvertible {
    /// An opaque error code. librdkafka's `rd_kafka_resp_err_t` values are wrapped as-is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// librdkafka's numeric `rd_kafka_resp_err_t`, or a wrapper code below -10000.
        public let rawValue: Int32

        public init(rawValue: Int32) { self.rawValue = rawValue }

        // librdkafka's codes are in RDKafka/KafkaError+RDKafka.swift.
        public static let configuration = Code(rawValue: -10_001)
        public static let closed = Code(rawValue: -10_002)
        public static let invalidArgument = Code(rawValue: -10_003)

        /// librdkafka's short name, e.g. `REQUEST_TIMED_OUT`.
        public var name: String {
            switch self {
            case .configuration: return "CONFIGURATION"
            case .closed: return "CLOSED"
            case .invalidArgument: return "INVALID_ARGUMENT"
            default: return librdkafkaName
            }
        }

        public var description: String { name }
    }

    public let code: Code
    /// librdkafka's message (or the wrapper's), suitable for logs.
    public let message: String
    /// The operation may succeed if tried again.
    public let isRetryable: Bool
    /// The client instance is unusable; recreate it.
    public let isFatal: Bool

    public init(code: Code, message: String, isRetryable: Bool = false, isFatal: Bool = false) {
        self.code = code
        self.message = message
        self.isRetryable = isRetryable
        self.isFatal = isFatal
    }

    public var description: String {
        var flags = ""
        if isFatal { flags += ", fatal" }
        if isRetryable { flags += ", retryable" }
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

    /// The cluster refuses this client: its SASL credentials or mechanism, its TLS handshake
    /// (an untrusted broker certificate, a client certificate the broker wants), or its ACLs.
    /// librdkafka retries these like any broker error; they do not go away by themselves.
    public var refusesAccess: Bool { Self.accessCodes.contains(code) }

    static let accessCodes: Set<Code> = [
        .authentication, .ssl, .topicAuthorizationFailed, .groupAuthorizationFailed, .clusterAuthorizationFailed,
    ]

    static func closed(_ what: String) -> KafkaError {
        KafkaError(code: .closed, message: "\(what) is closed")
    }
}
