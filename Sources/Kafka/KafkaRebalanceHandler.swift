/// What a ``KafkaConsumer`` calls when the group changes its assignment.
///
/// Each closure runs to completion on the consumer's poll thread's behalf before librdkafka
/// applies the change, so `onRevoke` can drain in-flight work and ``KafkaConsumer/commit(_:)``
/// for partitions it still owns.
///
/// - Important: The poll thread waits while a closure runs, and no messages are fetched.
///   A closure must not wait for further ``KafkaConsumer/messages``; it should bound its own
///   work (a drain timeout) well under `max.poll.interval.ms`.
public struct KafkaRebalanceHandler: Sendable {
    /// Partitions were assigned; called before their messages are delivered.
    public var onAssign: @Sendable (_ partitions: [TopicPartition]) async -> Void
    /// Partitions are about to be revoked; still owned, so offsets can be committed.
    /// Buffered, undelivered messages of these partitions have already been dropped.
    public var onRevoke: @Sendable (_ partitions: [TopicPartition]) async -> Void
    /// Partitions were lost (session timeout, fencing): another member may already own them,
    /// so commits for them will fail. In-flight work should be abandoned.
    public var onLost: @Sendable (_ partitions: [TopicPartition]) async -> Void

    public init(
        onAssign: @escaping @Sendable ([TopicPartition]) async -> Void = { _ in },
        onRevoke: @escaping @Sendable ([TopicPartition]) async -> Void = { _ in },
        onLost: @escaping @Sendable ([TopicPartition]) async -> Void = { _ in }
    ) {
        self.onAssign = onAssign
        self.onRevoke = onRevoke
        self.onLost = onLost
    }
}

/// A librdkafka log line, when a ``KafkaConsumer`` or ``KafkaProducer`` is given a log handler.
public struct KafkaLogEntry: Sendable {
    /// syslog level: 0 emergency … 3 error, 4 warning, 6 info, 7 debug.
    public var level: Int32
    /// librdkafka's facility, e.g. `FAIL`, `REQTMOUT`.
    public var facility: String
    public var message: String

    public init(level: Int32, facility: String, message: String) {
        self.level = level
        self.facility = facility
        self.message = message
    }
}
