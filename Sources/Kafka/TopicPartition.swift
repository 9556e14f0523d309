/// A partition of a topic. Ordered by topic, then partition number (logs and calls list them so).
public struct TopicPartition: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public var description: String { "\(topic)[\(partition)]" }

    public static func < (a: TopicPartition, b: TopicPartition) -> Bool { (a.topic, a.partition) < (b.topic, b.partition) }
}

/// A partition with an offset and, for commits, optional metadata.
///
/// For commits, ``offset`` is the offset of the *next* message to consume (last processed + 1),
/// as Kafka defines it.
public struct TopicPartitionOffset: Hashable, Sendable, CustomStringConvertible {
    public var topicPartition: TopicPartition
    public var offset: KafkaOffset
    /// Commit metadata: an opaque string stored with the committed offset. Some brokers drop it.
    public var metadata: String?

    public init(_ topicPartition: TopicPartition, offset: KafkaOffset, metadata: String? = nil) {
        self.topicPartition = topicPartition
        self.offset = offset
        self.metadata = metadata
    }

    public init(topic: String, partition: Int32, offset: Int64, metadata: String? = nil) {
        self.init(TopicPartition(topic: topic, partition: partition), offset: .init(offset), metadata: metadata)
    }

    public var topic: String { topicPartition.topic }
    public var partition: Int32 { topicPartition.partition }

    public var description: String {
        "\(topicPartition)@\(offset)" + (metadata.map { " (metadata \($0.utf8.count) bytes)" } ?? "")
    }
}

/// A Kafka offset, including librdkafka's logical offsets.
public struct KafkaOffset: Hashable, Sendable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    public let rawValue: Int64

    public init(_ rawValue: Int64) { self.rawValue = rawValue }
    public init(integerLiteral value: Int64) { self.rawValue = value }

    /// The first available offset of the partition.
    public static let beginning = KafkaOffset(-2)
    /// The end of the partition (only new messages).
    public static let end = KafkaOffset(-1)
    /// The group's committed offset (falling back to `auto.offset.reset`).
    public static let stored = KafkaOffset(-1000)
    /// No offset: nothing committed, or unknown.
    public static let invalid = KafkaOffset(-1001)

    /// True for a concrete, non-negative offset.
    public var isConcrete: Bool { rawValue >= 0 }

    public var description: String {
        switch self {
        case .beginning: return "beginning"
        case .end: return "end"
        case .stored: return "stored"
        case .invalid: return "invalid"
        default: return String(rawValue)
        }
    }
}
