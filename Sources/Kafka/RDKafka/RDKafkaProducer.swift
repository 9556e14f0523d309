import CRdKafka
import Dispatch
import Synchronization
import Threading

/// The producer's engine: owns the `rd_kafka_t` (through ``RDKafkaClient``) and the poll thread
/// that serves delivery reports, as ``RDKafkaConsumer`` does for the consumer.
///
/// `@unchecked Sendable`: librdkafka's producer API is thread-safe and the Swift state is in
/// `Mutex`es or atomics. The delivery callback finds each record's completion (a continuation's,
/// or the caller's callback) through its per-message opaque, a `passRetained` box released
/// exactly once, in the delivery report or when produce fails.
final class RDKafkaProducer: @unchecked Sendable {
    typealias Outcome = Result<KafkaDeliveryReport, KafkaError>

    private final class Delivery {
        let complete: @Sendable (Outcome) -> Void
        init(_ complete: @escaping @Sendable (Outcome) -> Void) { self.complete = complete }
    }

    private let client: RDKafkaClient
    private let stopRequested = Atomic<Bool>(false)
    /// Events (delivery reports) the poll thread has served so far; each frees room in
    /// librdkafka's queue. Only its growth matters: a send waits for it to move on.
    private let reports = Atomic<Int>(0)
    /// Notified when a poll served events (a lock when nobody waits).
    private let reported = ChangeSignal()
    private var pollThreadDone: DispatchSemaphore!

    /// - Parameter logHandler: librdkafka's log lines, served on the poll thread
    ///   (``RDKafkaLogRelay``); without one, librdkafka prints them to standard error.
    init(configuration: KafkaProducerConfiguration, logHandler: (@Sendable (KafkaLogEntry) -> Void)? = nil) throws(KafkaError) {
        var properties = configuration.rdKafkaProperties
        let relay = logHandler.map(RDKafkaLogRelay.init)
        if relay != nil { properties.append(RDKafkaLogRelay.queueProperty) }
        // The client keeps the relay alive until its handle is destroyed.
        let opaque = relay.map { Unmanaged.passUnretained($0).toOpaque() }
        client = try RDKafkaClient.make(.producer, properties: properties, opaque: opaque, opaqueOwner: relay) { conf in
            rd_kafka_conf_set_dr_msg_cb(conf, deliveryTrampoline)
            if relay != nil { rd_kafka_conf_set_log_cb(conf, relayLogTrampoline) }
        }
        if relay != nil { client.withHandle(RDKafkaLogRelay.forwardToMainQueue) }
        // The thread holds the client and the flag's owner only until asked to stop.
        pollThreadDone = DedicatedThread.start(name: "pb.kafka.send") { [self] in
            client.withHandle { rk in
                while !stopRequested.load(ordering: .acquiring) {
                    // Counted when poll returns, not in the callback: librdkafka frees a
                    // record's place in its queue after the callback, so a send woken inside it
                    // could find the queue still full, and wait for a report that never comes.
                    let served = rd_kafka_poll(rk, 100)
                    if served > 0 {
                        reports.add(Int(served), ordering: .releasing)
                        reported.notify()
                    }
                }
            }
        }
    }

    /// Produces one record and waits for its delivery report (or the reason it was refused).
    func produce(_ record: KafkaProducerRecord) async -> Outcome {
        await withCheckedContinuation { continuation in
            if let error = produce(record, then: { continuation.resume(returning: $0) }) {
                continuation.resume(returning: .failure(error))
            }
        }
    }

    /// Enqueues one record without waiting: `complete` runs on the poll thread with its
    /// delivery report, unless the record is refused at once (the error returned; `complete`
    /// never runs then).
    func produce(_ record: KafkaProducerRecord, then complete: @escaping @Sendable (Outcome) -> Void) -> KafkaError? {
        let box = Unmanaged.passRetained(Delivery(complete))
        guard let error = enqueue(record, opaque: box.toOpaque()) else { return nil }
        box.release()
        return error
    }

    private func enqueue(_ record: KafkaProducerRecord, opaque: UnsafeMutableRawPointer) -> KafkaError? {
        let headers = RDKafkaHeaders(record.headers)
        let error: OpaquePointer? = client.withHandle { rk in
            record.value.withUnsafeBytes { value in
                let partition = record.partition ?? crdkafka_partition_unassigned()
                if let key = record.key {
                    return key.withUnsafeBytes { k in
                        crdkafka_produce(
                            rk, record.topic, partition, k.baseAddress, k.count, value.baseAddress, value.count, headers?.pointer,
                            record.timestamp ?? 0, opaque)
                    }
                }
                return crdkafka_produce(
                    rk, record.topic, partition, nil, 0, value.baseAddress, value.count, headers?.pointer, record.timestamp ?? 0, opaque)
            }
        }
        guard let error else {
            headers?.release()  // librdkafka owns them now
            return nil
        }
        return KafkaError(consuming: error, context: "produce to \(record.topic)")
    }

    /// Events served so far (read before a produce that may find the queue full).
    var reportCount: Int { reports.load(ordering: .acquiring) }

    /// Waits until more than `count` events were served (room in the queue), or `deadline`.
    func waitForReport(after count: Int, until deadline: ContinuousClock.Instant) async {
        _ = await reported.wait(until: deadline) { reportCount > count }
    }

    /// Waits (on a thread of its own) until every record produced so far is delivered or failed.
    func flush(timeout: Duration) async throws(KafkaError) {
        let client = self.client
        let result = await DedicatedThread.run { client.withHandle { rd_kafka_flush($0, Int32(timeout.milliseconds)) } }
        reportsServedElsewhere()
        guard result == RD_KAFKA_RESP_ERR_NO_ERROR else { throw KafkaError(result, context: "flush") }
    }

    /// Fails whatever is still queued or in flight (each gets a delivery report with a purge
    /// error), stops the poll thread and waits for it.
    func purgeAndStop() async {
        let client = self.client
        await DedicatedThread.run {
            client.withHandle { rk in
                _ = rd_kafka_purge(rk, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
                _ = rd_kafka_flush(rk, 1000)
            }
        }
        requestStop()
        await DedicatedThread.join(pollThreadDone)
        reportsServedElsewhere()
    }

    /// rd_kafka_flush serves delivery reports on its caller's thread, not the poll thread's: a
    /// send waiting for room is woken here too (and, after a close, finds the producer closed).
    private func reportsServedElsewhere() {
        reports.add(1, ordering: .releasing)
        reported.notify()
    }

    /// Asks the poll thread to stop without waiting (from `deinit`).
    func requestStop() {
        stopRequested.store(true, ordering: .releasing)
    }

    fileprivate static func deliver(_ message: UnsafePointer<rd_kafka_message_t>) {
        guard let opaque = message.pointee._private else { return }
        let delivery = Unmanaged<Delivery>.fromOpaque(opaque).takeRetainedValue()
        let m = message.pointee
        if m.err == RD_KAFKA_RESP_ERR_NO_ERROR {
            let topic = String(cString: rd_kafka_topic_name(m.rkt))
            delivery.complete(.success(KafkaDeliveryReport(topic: topic, partition: m.partition, offset: m.offset)))
        } else {
            delivery.complete(.failure(KafkaError(m.err, context: "delivery")))
        }
    }
}

private let deliveryTrampoline: @convention(c) (OpaquePointer?, UnsafePointer<rd_kafka_message_t>?, UnsafeMutableRawPointer?) -> Void = {
    _, message, _ in
    if let message { RDKafkaProducer.deliver(message) }
}
