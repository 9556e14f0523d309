import Synchronization

/// A record to produce.
public struct KafkaProducerRecord: Sendable {
    public var topic: String
    /// A fixed partition, or nil to let the partitioner choose (by key hash).
    public var partition: Int32?
    public var key: [UInt8]?
    public var value: [UInt8]
    public var headers: [KafkaHeader]
    /// The record's create time in milliseconds since the Unix epoch; nil: the time it is
    /// produced. Set to write an event as it happened, e.g. to test `max_age`.
    public var timestamp: Int64?

    public init(
        topic: String, partition: Int32? = nil, key: [UInt8]? = nil, value: [UInt8], headers: [KafkaHeader] = [], timestamp: Int64? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
    }
}

/// Where a record was stored: the broker has acknowledged it.
public struct KafkaDeliveryReport: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64

    public init(topic: String, partition: Int32, offset: Int64) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
    }
}

/// A Kafka producer whose ``send(_:)`` returns only once the broker acknowledged the record.
///
/// Delivery reports are served on a dedicated poll thread (``RDKafkaProducer``). ``close()``
/// flushes, then fails whatever could not be delivered; no `send` is left waiting.
public final class KafkaProducer: Sendable {
    private let core: RDKafkaProducer
    private let configuration: KafkaProducerConfiguration
    private let closed = Mutex(false)

    /// - Parameter logHandler: librdkafka's log lines (connection failures, configuration
    ///   warnings, …), called on the producer's poll thread. Without one, librdkafka prints them
    ///   to standard error.
    /// - Throws: ``KafkaError`` with code `.configuration` for a bad property.
    public init(configuration: KafkaProducerConfiguration, logHandler: (@Sendable (KafkaLogEntry) -> Void)? = nil) throws(KafkaError) {
        self.configuration = configuration
        self.core = try RDKafkaProducer(configuration: configuration, logHandler: logHandler)
    }

    deinit {
        core.requestStop()
    }

    /// Produces one record and waits for the broker's acknowledgement. While librdkafka's queue
    /// is full, tries again as delivery reports free room (woken by each, never polling), for up
    /// to ``KafkaProducerConfiguration/queueFullTimeout``.
    /// - Throws: ``KafkaError``: delivery failed or timed out, or the producer is closed.
    public func send(_ record: KafkaProducerRecord) async throws(KafkaError) -> KafkaDeliveryReport {
        let deadline = ContinuousClock.now + configuration.queueFullTimeout
        while true {
            if closed.withLock({ $0 }) { throw KafkaError.closed("the producer") }
            let reportsBefore = core.reportCount
            let result = await core.produce(record)
            switch result {
            case .failure(let error) where error.code == .queueFull && ContinuousClock.now < deadline && !Task.isCancelled:
                await core.waitForReport(after: reportsBefore, until: deadline)
            default:
                return try result.get()
            }
        }
    }

    /// Produces one record without waiting for its acknowledgement: `onDelivery` runs once, on
    /// the producer's poll thread, with the broker's acknowledgement or the failure, and must
    /// not block (hand the result on). For callers that keep many records in flight without a
    /// task each: no task and no continuation per record (docs/benchmarks.md, the re-key hop).
    /// - Throws: ``KafkaError`` at once when the record is refused (librdkafka's queue is full:
    ///   `queueFull`, try again after deliveries; the producer is closed); `onDelivery` never
    ///   runs then.
    public func send(
        _ record: KafkaProducerRecord, onDelivery: @escaping @Sendable (Result<KafkaDeliveryReport, KafkaError>) -> Void
    ) throws(KafkaError) {
        if closed.withLock({ $0 }) { throw KafkaError.closed("the producer") }
        if let error = core.produce(record, then: onDelivery) { throw error }
    }

    /// Waits until every record produced so far is delivered or failed.
    public func flush(timeout: Duration = .seconds(30)) async throws(KafkaError) {
        try await core.flush(timeout: timeout)
    }

    /// Flushes for up to `timeout`, fails every record still undelivered, and stops. Idempotent.
    public func close(timeout: Duration = .seconds(30)) async {
        let first = closed.withLock { c in
            defer { c = true }
            return !c
        }
        guard first else { return }
        try? await core.flush(timeout: timeout)
        await core.purgeAndStop()
    }
}
