import Kafka
import Logging

extension KafkaLogEntry {
    /// The logger level for librdkafka's syslog level: 0–2 (emergency, alert, critical) critical,
    /// 3 error, 4 warning, 5 notice, 6 info, 7 debug (what `debug=…` properties produce).
    public var loggerLevel: Logger.Level {
        switch level {
        case ...2: .critical
        case 3: .error
        case 4: .warning
        case 5: .notice
        case 6: .info
        default: .debug
        }
    }
}

extension Logger {
    /// A log handler for a ``KafkaConsumer`` or ``KafkaProducer``: each librdkafka line becomes
    /// an entry of this logger at its mapped level (``KafkaLogEntry/loggerLevel``), with
    /// librdkafka's facility (`FAIL`, `CONFWARN`, …) as `librdkafka` metadata. Safe on
    /// librdkafka's poll threads: it only formats and writes a line.
    public var librdkafkaHandler: @Sendable (KafkaLogEntry) -> Void {
        let logger = self
        return { entry in
            logger.log(level: entry.loggerLevel, "\(entry.message)", metadata: ["librdkafka": "\(entry.facility)"])
        }
    }
}

extension Logger {
    /// An error handler for a ``KafkaConsumer``: errors librdkafka retries by itself are
    /// warnings; a refusal (``KafkaError/refusesAccess``: credentials, TLS, ACLs) or a fatal
    /// error is an error.
    public var kafkaErrorHandler: @Sendable (KafkaError) -> Void {
        let logger = self
        return { error in
            logger.log(level: error.isFatal || error.refusesAccess ? .error : .warning, "kafka: \(error)")
        }
    }
}
