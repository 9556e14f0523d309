import CRdKafka

/// Hands a client's librdkafka log lines to a Swift handler.
///
/// librdkafka calls a log callback from its own threads, where the application must not call
/// librdkafka or do anything lengthy (`rd_kafka_conf_set_log_cb`), unless the lines are
/// forwarded to a queue the application serves: with `log.queue=true` and
/// `rd_kafka_set_log_queue(rk, NULL)` they join the main queue, and the client's poll thread
/// runs the callback inside `rd_kafka_poll` or `rd_kafka_consumer_poll`. Lines logged while
/// the handle is made (`CONFWARN`) wait in that queue until it is forwarded.
final class RDKafkaLogRelay: Sendable {
    let handler: @Sendable (KafkaLogEntry) -> Void

    init(_ handler: @escaping @Sendable (KafkaLogEntry) -> Void) {
        self.handler = handler
    }

    /// The property that routes log lines through a queue (see above).
    static let queueProperty = (key: "log.queue", value: "true")

    /// Forwards the handle's log queue to its main queue, which its poll thread serves.
    static func forwardToMainQueue(_ rk: OpaquePointer) {
        _ = rd_kafka_set_log_queue(rk, nil)
    }

    static func entry(_ level: Int32, _ facility: UnsafePointer<CChar>?, _ message: UnsafePointer<CChar>?) -> KafkaLogEntry {
        KafkaLogEntry(
            level: level, facility: facility.map { String(cString: $0) } ?? "", message: message.map { String(cString: $0) } ?? "")
    }
}

/// For a handle whose opaque is an ``RDKafkaLogRelay`` (the producer's).
let relayLogTrampoline: @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Void = {
    rk, level, facility, message in
    guard let rk, let opaque = rd_kafka_opaque(rk) else { return }
    Unmanaged<RDKafkaLogRelay>.fromOpaque(opaque).takeUnretainedValue().handler(RDKafkaLogRelay.entry(level, facility, message))
}
