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

/// A Kafka client's librdkafka lines and errors as entries of a logger, repeats summarised
/// (``LogSummary``): a broker that is down costs a line when it goes down, a count every 30 s
/// while it stays down, and a line when the failures stop, not two lines every 50 ms.
///
/// Lines are alike when their text is, but for what changes with every attempt (librdkafka's
/// thread prefix, `after 12ms`, `timeout #3`); a client error alike with the line librdkafka
/// logged for it (a connection refused is both), so the pair is one line. The broker's name is
/// in librdkafka's text (`127.0.0.1:9092/1: Connect to …`), so is in the kind: two brokers
/// down are two incidents. Safe on librdkafka's poll threads.
public final class KafkaLogs: Sendable {
    public let summary: LogSummary

    /// Lines of Kafka clients that share `summary` (a process's clients do: one outage, one
    /// incident).
    public init(summary: LogSummary) {
        self.summary = summary
    }

    /// - Parameter period: at most one line alike per this long.
    public convenience init(logger: Logger, period: Duration = .seconds(30)) {
        self.init(summary: LogSummary(logger: logger, period: period))
    }

    convenience init(logger: Logger, period: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.init(summary: LogSummary(logger: logger, period: period, now: now))
    }

    /// For a ``KafkaConsumer``'s or ``KafkaProducer``'s `logHandler`: each line at its mapped
    /// level (``KafkaLogEntry/loggerLevel``), librdkafka's facility (`FAIL`, `CONFWARN`, …) as
    /// `librdkafka` metadata.
    public var lineHandler: @Sendable (KafkaLogEntry) -> Void {
        { [summary] entry in
            guard summary.logger.logLevel <= entry.loggerLevel else { return }
            // What `kafka.properties.debug` asks for is written whole: it is asked for to see every line.
            if entry.level >= 7 {
                return summary.logger.debug("\(entry.message)", metadata: ["librdkafka": "\(entry.facility)"])
            }
            summary.log(entry.loggerLevel, entry.message, kind: Self.kind(of: entry.message), metadata: ["librdkafka": "\(entry.facility)"])
        }
    }

    /// For a ``KafkaConsumer``'s `errorHandler`: errors librdkafka retries by itself are warnings;
    /// a refusal (``KafkaError/refusesAccess``: credentials, TLS, ACLs) or a fatal error is an
    /// error.
    public var errorHandler: @Sendable (KafkaError) -> Void {
        { [summary] error in
            let level: Logger.Level = error.isFatal || error.refusesAccess ? .error : .warning
            summary.log(level, "kafka: \(error)", kind: Self.kind(of: error.message))
        }
    }

    /// What makes lines alike: the text without librdkafka's `[thrd:…]: ` prefix and client
    /// name (`pushbridge#producer-1: `: the consumer and the producer fail alike), and with the
    /// numbers that change with every attempt (`after 12ms`, `timeout #3`) left out.
    static func kind(of message: String) -> String {
        var text = Substring(message)
        if text.hasPrefix("[thrd:"), let end = text.range(of: "]: ") { text = text[end.upperBound...] }
        if let space = text.firstIndex(of: " "), text[..<space].hasSuffix(":"), let hash = text[..<space].firstIndex(of: "#") {
            let client = text[text.index(after: hash)..<space]
            if client.hasPrefix("producer-") || client.hasPrefix("consumer-") { text = text[text.index(after: space)...] }
        }
        var kind = ""
        kind.reserveCapacity(text.utf8.count)
        var rest = text
        while let marker = [rest.firstRange(of: "after "), rest.firstRange(of: "timeout #")].compactMap({ $0 }).min(by: {
            $0.lowerBound < $1.lowerBound
        }) {
            kind += rest[..<marker.upperBound]
            rest = rest[marker.upperBound...]
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            if !digits.isEmpty {
                kind += "N"
                rest = rest.dropFirst(digits.count)
            }
        }
        return kind + rest
    }
}

extension Logger {
    /// A log handler for a Kafka client with repeats held back (``KafkaLogs/lineHandler``), for
    /// a client whose errors go elsewhere or nowhere (a producer).
    public var librdkafkaHandler: @Sendable (KafkaLogEntry) -> Void { KafkaLogs(logger: self).lineHandler }
}
