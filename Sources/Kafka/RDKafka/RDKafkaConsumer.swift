import CRdKafka
import Dispatch
import Synchronization
import Threading

/// The consumer's engine: owns the `rd_kafka_t` (through ``RDKafkaClient``), the poll thread,
/// the message channel and the serial queue for blocking calls.
///
/// `@unchecked Sendable`: librdkafka's handle API is thread-safe; Swift state is in `state`
/// (a `Mutex`) or immutable. The C callbacks find this object through `rd_kafka_opaque`,
/// stored with `passUnretained`: that is safe because the poll thread holds a strong reference
/// until `rd_kafka_consumer_close` has returned, and no callback is served after that.
final class RDKafkaConsumer: @unchecked Sendable {
    struct State {
        var stopRequested = false
        var assignment: Set<TopicPartition> = []
        var closed = false
        /// The cluster has answered this consumer (``RDKafkaConsumer/heardFromCluster()``).
        var heard = false
        /// Why the cluster refused this consumer before it ever answered it (+Startup).
        var startupFailure: KafkaError?
        /// Blocking calls under way, failed at once by a start-up failure.
        var pendingCalls: [Int: @Sendable (KafkaError) -> Void] = [:]
        var nextCallID = 0
        /// librdkafka calls on the blocking queue that have started and not returned.
        var callsUnderWay = 0
    }

    let configuration: KafkaConsumerConfiguration
    let rebalanceHandler: KafkaRebalanceHandler
    let errorHandler: @Sendable (KafkaError) -> Void
    let logHandler: (@Sendable (KafkaLogEntry) -> Void)?
    let endOfPartitionHandler: (@Sendable (TopicPartitionOffset) -> Void)?
    let channel: MessageChannel
    /// Serial: blocking calls (commits, committed, watermarks, …) run here in order, so an
    /// earlier commit can never land after a later one.
    let blockingQueue = DispatchQueue(label: "pushbridge.kafka.consumer.blocking")
    let state = Mutex(State())
    private(set) var client: RDKafkaClient!
    private var pollThreadDone: DispatchSemaphore?

    init(
        configuration: KafkaConsumerConfiguration,
        rebalanceHandler: KafkaRebalanceHandler,
        errorHandler: @escaping @Sendable (KafkaError) -> Void,
        logHandler: (@Sendable (KafkaLogEntry) -> Void)?,
        endOfPartitionHandler: (@Sendable (TopicPartitionOffset) -> Void)? = nil
    ) throws(KafkaError) {
        self.configuration = configuration
        self.rebalanceHandler = rebalanceHandler
        self.errorHandler = errorHandler
        self.logHandler = logHandler
        self.endOfPartitionHandler = endOfPartitionHandler
        self.channel = MessageChannel(capacity: configuration.messageBufferCapacity)

        var properties = configuration.rdKafkaProperties
        if logHandler != nil { properties.append(RDKafkaLogRelay.queueProperty) }
        if endOfPartitionHandler != nil { properties.append(("enable.partition.eof", "true")) }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        let hasLogHandler = logHandler != nil
        self.client = try RDKafkaClient.make(.consumer, properties: properties, opaque: opaque) { conf in
            rd_kafka_conf_set_rebalance_cb(conf, rebalanceTrampoline)
            rd_kafka_conf_set_error_cb(conf, errorTrampoline)
            if hasLogHandler { rd_kafka_conf_set_log_cb(conf, logTrampoline) }
        }
        client.withHandle { rk in
            // Route the main queue (errors, logs) through rd_kafka_consumer_poll.
            rd_kafka_poll_set_consumer(rk)
            if hasLogHandler { RDKafkaLogRelay.forwardToMainQueue(rk) }
        }
        pollThreadDone = DedicatedThread.start(name: "pb.kafka.poll") { [self] in
            pollLoop()
        }
    }

    // MARK: Poll loop (poll thread only)

    private var shouldStop: Bool { state.withLock { $0.stopRequested } }

    private func pollLoop() {
        var fatal: KafkaError?
        client.withHandle { rk in
            var batch: [KafkaMessage] = []
            batch.reserveCapacity(256)
            while !shouldStop {
                if let failure = state.withLock({ $0.startupFailure }) {
                    fatal = failure
                    break
                }
                guard let first = rd_kafka_consumer_poll(rk, 100) else { continue }
                fatal = take(first, into: &batch)
                while fatal == nil, batch.count < 256, let next = rd_kafka_consumer_poll(rk, 0) {
                    fatal = take(next, into: &batch)
                }
                if !batch.isEmpty {
                    channel.push(batch) { shouldStop }
                    batch.removeAll(keepingCapacity: true)
                }
                if fatal != nil { break }
            }
            // Leaves the group; serves the final revoke through the rebalance handler.
            rd_kafka_consumer_close(rk)
        }
        state.withLock {
            $0.closed = true
            $0.assignment = []
        }
        channel.finish(error: fatal)
    }

    /// Converts and destroys one polled message. Returns a fatal error, if it carried one.
    private func take(_ message: UnsafeMutablePointer<rd_kafka_message_t>, into batch: inout [KafkaMessage]) -> KafkaError? {
        defer { rd_kafka_message_destroy(message) }
        let err = message.pointee.err
        guard err == RD_KAFKA_RESP_ERR_NO_ERROR else {
            if err == RD_KAFKA_RESP_ERR__PARTITION_EOF {
                if let endOfPartitionHandler, let rkt = message.pointee.rkt {
                    // The messages polled before the end go to the channel first, so the handler
                    // can count on them being there (``KafkaConsumer/messagesQueued``).
                    if !batch.isEmpty {
                        channel.push(batch) { shouldStop }
                        batch.removeAll(keepingCapacity: true)
                    }
                    let tp = TopicPartition(topic: String(cString: rd_kafka_topic_name(rkt)), partition: message.pointee.partition)
                    endOfPartitionHandler(TopicPartitionOffset(tp, offset: KafkaOffset(message.pointee.offset)))
                }
                return nil
            }
            if err == RD_KAFKA_RESP_ERR__FATAL, let fatal = client.fatalError() {
                errorHandler(fatal)
                return fatal
            }
            let text = String(cString: rd_kafka_message_errstr(message))
            report(KafkaError(code: .init(err), message: text, isRetryable: KafkaError.transientCodes.contains(.init(err))))
            return nil
        }
        heardFromCluster()
        let topic = String(cString: rd_kafka_topic_name(message.pointee.rkt))
        batch.append(RDKafkaMessage.copy(message, topic: topic))
        return nil
    }

    // MARK: Lifecycle

    /// Asks the poll thread to leave the group and stop. Does not wait.
    func requestStop() {
        state.withLock { $0.stopRequested = true }
    }

    /// Stops and waits (on a non-cooperative thread) until the consumer has left the group and
    /// no librdkafka call of its own is under way, so that the handle can be destroyed once the
    /// consumer is released. A process that exits with a handle alive crashes now and then
    /// (its broker threads run on through `exit`: `replay` against a broker it cannot trust died
    /// with SIGSEGV after printing its error); calls made in slices (``blocking(timeout:_:)``)
    /// end within one slice of the stop.
    func close() async {
        requestStop()
        guard let done = pollThreadDone else { return }
        await DedicatedThread.join(done)
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in blockingQueue.async { c.resume() } }
    }

    // MARK: Blocking calls

    /// Runs a blocking librdkafka call on the serial blocking queue and awaits its result, or
    /// the cluster's refusal of this consumer at start-up, whichever comes first (the call then
    /// runs on, its answer unused: to the end of its slice if made with
    /// ``blocking(timeout:_:)``, and ``close()`` waits for it).
    func blocking<T: Sendable>(_ body: @escaping @Sendable (OpaquePointer) -> Result<T, KafkaError>) async throws(KafkaError) -> T {
        // A consumer the cluster refused has closed too: the refusal is the reason to give.
        let refused: KafkaError? = state.withLock { $0.startupFailure ?? ($0.closed ? KafkaError.closed("the consumer") : nil) }
        if let refused { throw refused }
        let result = await withCheckedContinuation { (c: CheckedContinuation<Result<T, KafkaError>, Never>) in
            let answer = OnceAnswer(c)
            let id = state.withLock { s in
                s.nextCallID += 1
                s.pendingCalls[s.nextCallID] = { answer.give(.failure($0)) }
                return s.nextCallID
            }
            blockingQueue.async { [self] in
                state.withLock { $0.callsUnderWay += 1 }
                let result = client!.withHandle(body)
                let finish: @Sendable () -> Void = { [self] in
                    state.withLock { _ = $0.pendingCalls.removeValue(forKey: id) }
                    answer.give(result)
                }
                // A call that fails for want of a broker before the cluster ever answered may be
                // a refusal on its way: librdkafka reports an untrusted certificate or a refused
                // login through the error callback, which can come just after the call failed.
                // The call stays pending a moment, so that the refusal, the reason to give, wins.
                let refusalMayFollow = state.withLock { s -> Bool in
                    s.callsUnderWay -= 1
                    guard case .failure(let error) = result else { return false }
                    return (error.code == .transport || error.code == .allBrokersDown) && !s.heard
                }
                if refusalMayFollow {
                    DispatchQueue.global().asyncAfter(deadline: .now() + Self.refusalGrace, execute: finish)
                } else {
                    finish()
                }
            }
        }
        if case .success = result { heardFromCluster() }
        return try result.get()
    }

    /// How long a call that failed for want of a broker, before the cluster ever answered,
    /// waits for a refusal that may follow it.
    static let refusalGrace: DispatchTimeInterval = .milliseconds(500)

    /// The first slice of a call made with ``blocking(timeout:_:)``.
    static let firstSlice: Duration = .milliseconds(250)
    /// The longest: what a ``close()`` waits at most for a call under way.
    static let longestSlice: Duration = .seconds(8)

    /// A blocking call that waits up to `timeout` for the cluster, made as calls of 250 ms,
    /// 500 ms, 1 s, 2 s, 4 s and then 8 s each (`body` gets the slice in ms), the next one only
    /// while the last waited its whole slice and failed as a wait does (timed out, no broker),
    /// time is left, and the consumer is neither stopping nor refused. So a closing or refused
    /// consumer's call ends within a slice instead of running on to its timeout, and an answer
    /// that takes seconds still gets its seconds. The slices stop growing at 8 s: they used to
    /// end with one of all the time left, and a close during a 600 s question waited 596 s (a
    /// full test run hung on it). For questions (and seeks): asking twice is harmless.
    func blocking<T: Sendable>(
        timeout: Duration, _ body: @escaping @Sendable (OpaquePointer, Int32) -> Result<T, KafkaError>
    ) async throws(KafkaError) -> T {
        try await blocking { [self] rk in
            let deadline = ContinuousClock.now + timeout
            var calls = 0
            while true {
                let start = ContinuousClock.now
                let left = max(deadline - start, .milliseconds(1))
                let slice = min(left, Self.firstSlice * (1 << min(calls, 5)), Self.longestSlice)
                calls += 1
                let result = body(rk, Int32(slice.milliseconds))
                guard case .failure(let error) = result, error.code == .timedOut || error.code == .transport,
                    ContinuousClock.now - start >= slice, ContinuousClock.now < deadline,
                    !state.withLock({ $0.stopRequested || $0.startupFailure != nil })
                else { return result }
            }
        }
    }
}

// MARK: C trampolines

private let errorTrampoline: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void = {
    rk, err, reason, opaque in
    guard let opaque else { return }
    let consumer = Unmanaged<RDKafkaConsumer>.fromOpaque(opaque).takeUnretainedValue()
    let code = rd_kafka_resp_err_t(rawValue: err)
    let text = reason.map { String(cString: $0) } ?? String(cString: rd_kafka_err2str(code))
    if code == RD_KAFKA_RESP_ERR__FATAL, let fatal = consumer.client?.fatalError() {
        consumer.errorHandler(fatal)
    } else {
        consumer.report(KafkaError(code: .init(code), message: text, isRetryable: KafkaError.transientCodes.contains(.init(code))))
    }
}

private let logTrampoline: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Void = {
    rk, level, facility, message in
    guard let rk, let opaque = rd_kafka_opaque(rk) else { return }
    let consumer = Unmanaged<RDKafkaConsumer>.fromOpaque(opaque).takeUnretainedValue()
    consumer.logHandler?(RDKafkaLogRelay.entry(level, facility, message))
}

private let rebalanceTrampoline:
    @convention(c) (
        OpaquePointer?, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?, UnsafeMutableRawPointer?
    ) -> Void = { rk, err, partitions, opaque in
        guard let rk, let partitions, let opaque else { return }
        Unmanaged<RDKafkaConsumer>.fromOpaque(opaque).takeUnretainedValue()
            .handleRebalance(rk, err, RDKafkaTopicPartitionList(borrowing: partitions))
    }
