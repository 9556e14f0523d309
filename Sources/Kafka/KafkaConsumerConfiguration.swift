/// How a ``KafkaConsumer`` connects and joins its group.
///
/// Defaults suit a pushbridge worker: explicit commits only, cooperative-sticky assignment,
/// reading from the beginning of a partition that has no committed offset.
public struct KafkaConsumerConfiguration: Sendable {
    /// How partitions are spread over the members of a group.
    public enum AssignmentStrategy: String, Sendable {
        /// Eager: every rebalance revokes all partitions first.
        case range
        case roundRobin = "roundrobin"
        /// Incremental: only moved partitions are revoked.
        case cooperativeSticky = "cooperative-sticky"
    }

    /// Where to start when a partition has no committed offset.
    public enum OffsetReset: String, Sendable {
        case earliest, latest
        /// Fail with an error instead.
        case error
    }

    /// `host:port` of one or more brokers.
    public var bootstrapServers: [String]
    /// The consumer group; required for ``KafkaConsumer/subscribe(topics:)`` and commits.
    public var groupID: String?
    /// Static membership (`group.instance.id`): a restart within ``sessionTimeout`` keeps the
    /// same assignment without a rebalance. Must be unique per member.
    public var groupInstanceID: String?
    public var assignmentStrategy: AssignmentStrategy = .cooperativeSticky
    /// The broker removes a member it has not heard from for this long. Default 45 s.
    public var sessionTimeout: Duration = .seconds(45)
    /// Heartbeat interval; keep it well under ``sessionTimeout``. Default 3 s.
    public var heartbeatInterval: Duration = .seconds(3)
    /// A member that does not poll for this long leaves the group. Default 300 s.
    public var maxPollInterval: Duration = .seconds(300)
    public var autoOffsetReset: OffsetReset = .earliest
    public var clientID: String = "pushbridge"
    /// A request a broker leaves unanswered this long fails, and its connection is closed and
    /// made again (`socket.timeout.ms`): how long a connection that died without a word (no RST,
    /// no FIN) holds fetches, commits and heartbeats. Default 10 s, not librdkafka's 60 s:
    /// every connection always has a request out (a fetch waits at most `fetch.wait.max.ms`, the
    /// coordinator gets a heartbeat every 3 s), so the request timeout is the liveness check.
    public var requestTimeout: Duration = .seconds(10)
    /// Connecting to a broker, TLS and SASL included (`socket.connection.setup.timeout.ms`).
    /// Default 10 s, not librdkafka's 30 s.
    public var connectTimeout: Duration = .seconds(10)
    /// Messages held on the Swift side between the poll thread and ``KafkaConsumer/messages``.
    /// When full, the poll thread waits. Default 10,000.
    public var messageBufferCapacity: Int = 10_000
    /// Raw librdkafka properties (e.g. `security.protocol`, `sasl.mechanism`, `ssl.ca.location`),
    /// applied last, so they override everything above. `enable.auto.commit` is always false.
    /// Producer-only properties (`P` in librdkafka's CONFIGURATION.md, e.g. `acks`) are left out,
    /// so the same set can configure a ``KafkaProducer`` too.
    public var properties: [String: String] = [:]

    public init(bootstrapServers: [String], groupID: String? = nil) {
        self.bootstrapServers = bootstrapServers
        self.groupID = groupID
    }
}

/// How a ``KafkaProducer`` connects and delivers.
public struct KafkaProducerConfiguration: Sendable {
    public var bootstrapServers: [String]
    public var clientID: String = "pushbridge"
    /// Idempotent delivery (no duplicates from producer retries, order kept). Default true.
    public var enableIdempotence: Bool = true
    /// How long librdkafka may try to deliver a record before reporting failure. Default 30 s.
    public var deliveryTimeout: Duration = .seconds(30)
    /// How long to wait to fill a batch. Default 5 ms.
    public var linger: Duration = .milliseconds(5)
    /// A produce request left unanswered this long fails and its connection is made again
    /// (`socket.timeout.ms`), within ``deliveryTimeout``. Default 10 s, not librdkafka's 60 s
    /// (see ``KafkaConsumerConfiguration/requestTimeout``).
    public var requestTimeout: Duration = .seconds(10)
    /// Connecting to a broker, TLS and SASL included (`socket.connection.setup.timeout.ms`).
    /// Default 10 s, not librdkafka's 30 s.
    public var connectTimeout: Duration = .seconds(10)
    /// When librdkafka's local queue is full, ``KafkaProducer/send(_:)`` waits this long for room
    /// before failing with a retryable `.queueFull`. Default 10 s.
    public var queueFullTimeout: Duration = .seconds(10)
    /// Raw librdkafka properties, applied last. Consumer-only properties (`C` in librdkafka's
    /// CONFIGURATION.md, e.g. `fetch.wait.max.ms`) are left out, so the same set can configure a
    /// ``KafkaConsumer`` too.
    public var properties: [String: String] = [:]

    public init(bootstrapServers: [String]) {
        self.bootstrapServers = bootstrapServers
    }
}
