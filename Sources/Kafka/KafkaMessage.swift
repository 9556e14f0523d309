/// A Kafka record header. A header's value may be absent (null), which is not the same as empty.
public struct KafkaHeader: Hashable, Sendable {
    public var name: String
    public var value: [UInt8]?

    public init(name: String, value: [UInt8]?) {
        self.name = name
        self.value = value
    }

    public init(name: String, string: String) {
        self.init(name: name, value: Array(string.utf8))
    }

    /// The value decoded as UTF-8, if present and valid.
    public var stringValue: String? {
        value.flatMap { String(validating: $0, as: UTF8.self) }
    }
}

/// The timestamp of a record, in milliseconds since the Unix epoch.
public struct KafkaTimestamp: Hashable, Sendable {
    public enum Kind: Sendable, Hashable {
        /// Set by the producer.
        case createTime
        /// Set by the broker when it appended the record.
        case logAppendTime
    }

    public var milliseconds: Int64
    public var kind: Kind

    public init(milliseconds: Int64, kind: Kind) {
        self.milliseconds = milliseconds
        self.kind = kind
    }
}

/// A record read by a ``KafkaConsumer``.
public struct KafkaMessage: Sendable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var key: [UInt8]?
    /// The record value; an empty array for a null value (a tombstone).
    public var value: [UInt8]
    public var headers: [KafkaHeader]
    public var timestamp: KafkaTimestamp?

    public init(
        topic: String, partition: Int32, offset: Int64, key: [UInt8]? = nil, value: [UInt8],
        headers: [KafkaHeader] = [], timestamp: KafkaTimestamp? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }

    public var topicPartition: TopicPartition { TopicPartition(topic: topic, partition: partition) }

    /// The first header with this name (names compare exactly, as Kafka does).
    public func header(_ name: String) -> KafkaHeader? {
        headers.first { $0.name == name }
    }
}
