import Kafka
import Logging
import Synchronization

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

/// A Kafka client's librdkafka lines and errors as entries of a logger, repeats held back: a
/// line is written the first time, then at most once per 30 s with how many like it were held
/// back since (`repeated` metadata, ``RepeatedLines``). A broker that is down costs a line when
/// it goes down and one every 30 s, not two every 50 ms.
///
/// Lines are alike when their text is, but for what changes with every attempt (librdkafka's
/// thread prefix, `after 12ms`, `timeout #3`); a client error alike with the line librdkafka
/// logged for it (a connection refused is both), so the pair is one line. Safe on librdkafka's
/// poll threads: it formats and writes a line, under a lock of its own.
public final class KafkaLogs: Sendable {
    private let logger: Logger
    private let repeats: Mutex<RepeatedLines>
    private let now: @Sendable () -> ContinuousClock.Instant

    /// - Parameter period: at most one line alike per this long.
    public convenience init(logger: Logger, period: Duration = .seconds(30)) {
        self.init(logger: logger, period: period, now: { .now })
    }

    init(logger: Logger, period: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.logger = logger
        self.repeats = Mutex(RepeatedLines(period: period))
        self.now = now
    }

    /// For a ``KafkaConsumer``'s or ``KafkaProducer``'s `logHandler`: each line at its mapped
    /// level (``KafkaLogEntry/loggerLevel``), librdkafka's facility (`FAIL`, `CONFWARN`, …) as
    /// `librdkafka` metadata.
    public var lineHandler: @Sendable (KafkaLogEntry) -> Void {
        { [self] entry in
            guard logger.logLevel <= entry.loggerLevel else { return }
            write(entry.loggerLevel, "\(entry.message)", kind: Self.kind(of: entry.message), metadata: ["librdkafka": "\(entry.facility)"])
        }
    }

    /// For a ``KafkaConsumer``'s `errorHandler`: errors librdkafka retries by itself are warnings;
    /// a refusal (``KafkaError/refusesAccess``: credentials, TLS, ACLs) or a fatal error is an
    /// error.
    public var errorHandler: @Sendable (KafkaError) -> Void {
        { [self] error in
            let level: Logger.Level = error.isFatal || error.refusesAccess ? .error : .warning
            write(level, "kafka: \(error)", kind: Self.kind(of: error.message), metadata: [:])
        }
    }

    private func write(_ level: Logger.Level, _ message: Logger.Message, kind: String, metadata: Logger.Metadata) {
        guard case .write(let heldBack) = repeats.withLock({ $0.admit(kind, at: now()) }) else { return }
        var metadata = metadata
        if heldBack > 0 { metadata["repeated"] = "\(heldBack)" }
        logger.log(level: level, message, metadata: metadata)
    }

    /// What makes lines alike: the text without librdkafka's `[thrd:…]: ` prefix, and with the
    /// numbers that change with every attempt (`after 12ms`, `timeout #3`) left out.
    static func kind(of message: String) -> String {
        var text = Substring(message)
        if text.hasPrefix("[thrd:"), let end = text.range(of: "]: ") { text = text[end.upperBound...] }
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
