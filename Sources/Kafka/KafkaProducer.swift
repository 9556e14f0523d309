import CRdKafka
import Dispatch
import Synchronization
import Threading

/// A record to produce.
public struct KafkaProducerRecord: Sendable {
    public var topic: String
    /// A fixed partition, or nil to let the partitioner choose (by key hash).
    public var partition: Int32?
    public var key: [UInt8]?
    public var value: [UInt8]
    public var headers: [KafkaHeader]

    public init(topic: String, partition: Int32? = nil, key: [UInt8]? = nil, value: [UInt8], headers: [KafkaHeader] = []) {
        self.topic = topic
        self.partition = partition
        self.key = key
        self.value = value
        self.headers = headers
    }
}

/// Where a record was stored: the broker has acknowledged it.
public struct KafkaDeliveryReport: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
}

/// A Kafka producer whose ``send(_:)`` returns only once the broker acknowledged the record.
///
/// Delivery reports are served on a dedicated poll thread. ``close()`` flushes, then fails
/// whatever could not be delivered; no `send` is left waiting.
///
/// `@unchecked Sendable`: librdkafka's producer API is thread-safe and the Swift state is in a
/// `Mutex`. The callback finds each record's continuation through its per-message opaque, a
/// `passRetained` box released exactly once, in the delivery report or when produce fails.
public final class KafkaProducer: @unchecked Sendable {
    private final class Delivery {
        let continuation: CheckedContinuation<Result<KafkaDeliveryReport, KafkaError>, Never>
        init(_ c: CheckedContinuation<Result<KafkaDeliveryReport, KafkaError>, Never>) { continuation = c }
    }

    private let client: RDKafkaClient
    private let configuration: KafkaProducerConfiguration
    private let stop = StopFlag()
    private let closed = Mutex(false)
    private var pollThreadDone: DispatchSemaphore!

    /// - Throws: ``KafkaError`` with code `.configuration` for a bad property.
    public init(configuration: KafkaProducerConfiguration) throws(KafkaError) {
        self.configuration = configuration
        self.client = try RDKafkaClient.make(.producer, properties: configuration.rdKafkaProperties) { conf in
            rd_kafka_conf_set_dr_msg_cb(conf, deliveryTrampoline)
        }
        // The thread holds the client and the flag, not self, so `deinit` can stop it.
        let client = self.client
        let stop = self.stop
        pollThreadDone = DedicatedThread.start(name: "pushbridge.kafka.producer") {
            client.withHandle { rk in
                while !stop.isSet {
                    rd_kafka_poll(rk, 100)
                }
            }
        }
    }

    deinit {
        stop.set()
    }

    /// Produces one record and waits for the broker's acknowledgement.
    /// - Throws: ``KafkaError``: delivery failed or timed out, or the producer is closed.
    public func send(_ record: KafkaProducerRecord) async throws(KafkaError) -> KafkaDeliveryReport {
        let clock = ContinuousClock()
        let deadline = clock.now + configuration.queueFullTimeout
        while true {
            if closed.withLock({ $0 }) { throw KafkaError.closed("the producer") }
            let result = await withCheckedContinuation { continuation in
                let box = Unmanaged.passRetained(Delivery(continuation))
                if let error = enqueue(record, opaque: box.toOpaque()) {
                    box.release()
                    continuation.resume(returning: .failure(error))
                }
            }
            switch result {
            case .failure(let error) where error.code == .queueFull && clock.now < deadline:
                try? await Task.sleep(for: .milliseconds(5))
            default:
                return try result.get()
            }
        }
    }

    private func enqueue(_ record: KafkaProducerRecord, opaque: UnsafeMutableRawPointer) -> KafkaError? {
        let headers = RDKafkaHeaders(record.headers)
        let error: OpaquePointer? = client.withHandle { rk in
            record.value.withUnsafeBytes { value in
                let partition = record.partition ?? crdkafka_partition_unassigned()
                if let key = record.key {
                    return key.withUnsafeBytes { k in
                        crdkafka_produce(rk, record.topic, partition, k.baseAddress, k.count, value.baseAddress, value.count, headers?.pointer, opaque)
                    }
                }
                return crdkafka_produce(rk, record.topic, partition, nil, 0, value.baseAddress, value.count, headers?.pointer, opaque)
            }
        }
        guard let error else {
            headers?.release()  // librdkafka owns them now
            return nil
        }
        return KafkaError(consuming: error, context: "produce to \(record.topic)")
    }

    /// Waits until every record produced so far is delivered or failed.
    public func flush(timeout: Duration = .seconds(30)) async throws(KafkaError) {
        let client = self.client
        let result = await DedicatedThread.run { client.withHandle { rd_kafka_flush($0, Int32(timeout.milliseconds)) } }
        guard result == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(result, context: "flush") }
    }

    /// Flushes for up to `timeout`, fails every record still undelivered, and stops. Idempotent.
    public func close(timeout: Duration = .seconds(30)) async {
        let first = closed.withLock { c in
            defer { c = true }
            return !c
        }
        guard first else { return }
        try? await flush(timeout: timeout)
        let client = self.client
        let done = pollThreadDone!
        await DedicatedThread.run {
            client.withHandle { rk in
                // Whatever is left gets a delivery report with a purge error.
                _ = rd_kafka_purge(rk, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
                _ = rd_kafka_flush(rk, 1000)
            }
        }
        stop.set()
        await DedicatedThread.join(done)
    }

    fileprivate static func deliver(_ message: UnsafePointer<rd_kafka_message_t>) {
        guard let opaque = message.pointee._private else { return }
        let delivery = Unmanaged<Delivery>.fromOpaque(opaque).takeRetainedValue()
        let m = message.pointee
        if m.err == RD_KAFKA_RESP_ERR_NO_ERROR {
            let topic = String(cString: rd_kafka_topic_name(m.rkt))
            delivery.continuation.resume(returning: .success(KafkaDeliveryReport(topic: topic, partition: m.partition, offset: m.offset)))
        } else {
            delivery.continuation.resume(returning: .failure(KafkaError(m.err, context: "delivery")))
        }
    }
}

private let deliveryTrampoline: @convention(c) (OpaquePointer?, UnsafePointer<rd_kafka_message_t>?, UnsafeMutableRawPointer?) -> Void = {
    _, message, _ in
    if let message { KafkaProducer.deliver(message) }
}

/// A flag shared by an object and its poll thread.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
