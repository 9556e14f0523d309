/// A Kafka consumer: a member of a consumer group (``subscribe(topics:)``) or a reader of
/// explicitly assigned partitions (``assign(_:)``, for replay).
///
/// Offsets are never committed automatically: call ``commit(_:)`` with what is done.
/// Messages are fetched on a dedicated thread and read through ``messages``, which holds at
/// most ``KafkaConsumerConfiguration/messageBufferCapacity`` messages.
///
/// Call ``close()`` to leave the group cleanly; it runs the revoke handler one last time.
/// A consumer that is released without `close()` leaves the group in the background.
public final class KafkaConsumer: Sendable {
    let core: RDKafkaConsumer

    /// Creates the consumer and starts its poll thread.
    ///
    /// - Parameters:
    ///   - rebalanceHandler: called around assignment changes; see ``KafkaRebalanceHandler``.
    ///   - errorHandler: non-fatal client errors (brokers down, request failures) that librdkafka
    ///     retries by itself; for logs and metrics. Called on the poll thread.
    ///   - logHandler: librdkafka's log lines. Without one, librdkafka prints to stderr.
    ///   - endOfPartitionHandler: called (on the poll thread) with the next offset when the
    ///     consumer has read everything a partition holds. The messages before it are in
    ///     ``messages`` by then (counted in ``messagesQueued``), though maybe not read yet.
    ///     Without one, the end of a partition is not reported.
    /// - Throws: ``KafkaError`` with code `.configuration` for a bad property.
    public init(
        configuration: KafkaConsumerConfiguration,
        rebalanceHandler: KafkaRebalanceHandler = .init(),
        errorHandler: @escaping @Sendable (KafkaError) -> Void = { _ in },
        logHandler: (@Sendable (KafkaLogEntry) -> Void)? = nil,
        endOfPartitionHandler: (@Sendable (TopicPartitionOffset) -> Void)? = nil
    ) throws(KafkaError) {
        self.core = try RDKafkaConsumer(
            configuration: configuration, rebalanceHandler: rebalanceHandler,
            errorHandler: errorHandler, logHandler: logHandler, endOfPartitionHandler: endOfPartitionHandler
        )
    }

    deinit {
        core.requestStop()
    }

    /// Joins the group and subscribes to `topics`. Requires a group ID.
    public func subscribe(topics: [String]) throws(KafkaError) {
        guard core.configuration.groupID != nil else {
            throw KafkaError(code: .configuration, message: "subscribe needs a group ID (group.id)")
        }
        try core.subscribe(topics: topics)
    }

    /// Reads exactly these partitions from these offsets, without joining a group (assign mode,
    /// e.g. for replay). Offsets may be concrete or ``KafkaOffset/beginning``/`.end`/`.stored`.
    public func assign(_ partitions: [TopicPartitionOffset]) throws(KafkaError) {
        try core.assign(partitions)
    }

    /// The partitions currently assigned to this consumer.
    public var assignment: Set<TopicPartition> {
        core.state.withLock { $0.assignment }
    }

    /// The messages, in order per partition. Ends after ``close()``; throws a fatal error.
    /// - Important: a single reader only.
    public var messages: KafkaMessageSequence { KafkaMessageSequence(channel: core.channel) }

    /// Up to `max` messages fetched and waiting, without waiting for more: with one from
    /// ``messages``, a batch as large as what has arrived (a restore reads thousands at a time,
    /// a quiet partition one). The same single reader as ``messages``.
    public func takeBuffered(max: Int) -> [KafkaMessage] { core.channel.takeBuffered(max: max) }

    /// How many messages the poll thread has put into ``messages`` since the consumer started,
    /// read or not (those dropped for revoked partitions count too). A reader that counts what it
    /// took knows the buffer is empty when its count reaches this one; read from the
    /// end-of-partition handler, it covers every message before that end.
    public var messagesQueued: Int { core.channel.pushedTotal }

    /// Leaves the group (running ``KafkaRebalanceHandler/onRevoke`` for the last assignment)
    /// and stops the poll thread. Idempotent.
    public func close() async {
        await core.close()
    }

    /// Blocking librdkafka calls of this consumer under way now (cluster questions, commits): none
    /// once ``close()`` has returned, so that releasing the consumer destroys its handle.
    public var callsUnderWay: Int { core.state.withLock { $0.callsUnderWay } }

    /// Whether the librdkafka library in use takes `value` for the property `key` (e.g.
    /// `fetch.queue.backoff.ms`, new in 2.1); a refused property makes the consumer refuse to start.
    public static func librdkafkaAccepts(property key: String, value: String) -> Bool {
        RDKafkaClient.accepts(property: key, value: value)
    }

    /// The version of the librdkafka library in use (which may differ from the headers').
    public static var librdkafkaVersion: String { RDKafkaClient.libraryVersion }
}

/// The messages of a ``KafkaConsumer``.
public struct KafkaMessageSequence: AsyncSequence, Sendable {
    public typealias Element = KafkaMessage
    public typealias Failure = KafkaError

    let channel: MessageChannel

    public struct AsyncIterator: AsyncIteratorProtocol {
        let channel: MessageChannel

        public mutating func next() async throws(KafkaError) -> KafkaMessage? {
            try await channel.next()
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(KafkaError) -> KafkaMessage? {
            try await channel.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(channel: channel) }
}
