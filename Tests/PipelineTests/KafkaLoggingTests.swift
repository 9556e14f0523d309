import Kafka
import Logging
import Synchronization
import Testing

@testable import Pipeline

/// librdkafka's lines and errors as entries of the worker's logger.
@Suite("librdkafka's log lines and errors in the logger")
struct KafkaLoggingTests {
    @Test("syslog levels map to logger levels: 0–2 critical, 3 error, 4 warning, 5 notice, 6 info, 7 debug")
    func levels() {
        let mapped = (0...7).map { KafkaLogEntry(level: Int32($0), facility: "F", message: "m").loggerLevel }
        #expect(mapped == [.critical, .critical, .critical, .error, .warning, .notice, .info, .debug])
    }

    @Test("a line becomes one entry at its level, the facility as metadata; below the logger's level, none")
    func handler() {
        let captured = Captured()
        var logger = Logger(label: "pushbridge") { _ in captured.handler }
        logger.logLevel = .info
        let handler = logger.librdkafkaHandler
        handler(KafkaLogEntry(level: 3, facility: "FAIL", message: "[thrd:b/1]: b/1: Connect to ipv4#127.0.0.1:1 failed"))
        handler(KafkaLogEntry(level: 4, facility: "CONFWARN", message: "[thrd:app]: Configuration property x is deprecated"))
        handler(KafkaLogEntry(level: 7, facility: "BROKER", message: "debug line"))
        let entries = captured.entries
        #expect(entries.map(\.level) == [.error, .warning])
        #expect(entries.map(\.metadata) == [["librdkafka": "FAIL"], ["librdkafka": "CONFWARN"]])
        #expect(entries.first?.message == "[thrd:b/1]: b/1: Connect to ipv4#127.0.0.1:1 failed")
    }

    @Test("Kafka errors: retried ones are warnings; a refusal (credentials, TLS, ACLs) or a fatal error is an error")
    func errors() {
        let captured = Captured()
        let logger = Logger(label: "pushbridge") { _ in captured.handler }
        let handler = KafkaLogs(logger: logger).errorHandler
        handler(KafkaError(code: .transport, message: "b/1: Disconnected", isRetryable: true))
        handler(KafkaError(code: .authentication, message: "SASL authentication error"))
        handler(KafkaError(code: .ssl, message: "certificate verify failed"))
        handler(KafkaError(code: .requestTimedOut, message: "x", isFatal: true))
        #expect(captured.entries.map(\.level) == [.warning, .error, .error, .error])
        #expect(captured.entries[1].message.hasPrefix("kafka: KafkaError(_AUTHENTICATION"), "\(captured.entries[1].message)")
    }
}

/// A broker that is down: librdkafka fails a connection every 50 ms, and the client reports each
/// as an error too.
@Suite("Kafka logs while a broker is down: one line when it goes down, then one per period")
struct KafkaLogRepeatsTests {
    static let refused = "127.0.0.1:9/bootstrap: Connect to ipv4#127.0.0.1:9 failed: Connection refused (after 0ms in state CONNECT)"

    /// A clock the test moves.
    final class Clock: Sendable {
        let start = ContinuousClock.now
        private let offset = Mutex<Duration>(.zero)
        func advance(_ by: Duration) { offset.withLock { $0 += by } }
        var now: ContinuousClock.Instant { start + offset.withLock { $0 } }
    }

    @Test(
        "a refused connection every 50 ms for 65 s: the librdkafka line and the client error alike make three lines, the later two counting what was held back"
    )
    func brokerDown() {
        let captured = Captured()
        let logger = Logger(label: "pushbridge") { _ in captured.handler }
        let clock = Clock()
        let logs = KafkaLogs(logger: logger, period: .seconds(30), now: { clock.now })
        for attempt in 0..<1_300 {
            let ms = attempt % 3  // librdkafka's own count varies from line to line
            logs.lineHandler(
                KafkaLogEntry(
                    level: 3, facility: "FAIL",
                    message: "[thrd:127.0.0.1:9/bootstrap]: " + Self.refused.replacingOccurrences(of: "after 0ms", with: "after \(ms)ms")))
            logs.errorHandler(KafkaError(code: .transport, message: Self.refused, isRetryable: true))
            clock.advance(.milliseconds(50))
        }
        let entries = captured.entries
        #expect(entries.count == 3, "\(entries.map(\.message))")
        #expect(entries.map { $0.metadata["repeated"] } == [nil, "1199", "1199"])
        #expect(entries.first?.metadata["librdkafka"] == "FAIL")
    }

    @Test("a different line is written at once: the state changed")
    func change() {
        let captured = Captured()
        let logger = Logger(label: "pushbridge") { _ in captured.handler }
        let clock = Clock()
        let logs = KafkaLogs(logger: logger, period: .seconds(30), now: { clock.now })
        logs.errorHandler(KafkaError(code: .transport, message: Self.refused, isRetryable: true))
        logs.errorHandler(KafkaError(code: .allBrokersDown, message: "1/1 brokers are down", isRetryable: true))
        logs.errorHandler(KafkaError(code: .transport, message: Self.refused, isRetryable: true))
        #expect(
            captured.entries.map(\.message) == [
                "kafka: KafkaError(_TRANSPORT, retryable): " + Self.refused, "kafka: KafkaError(_ALL_BROKERS_DOWN, retryable): 1/1 brokers are down",
            ])
    }

    @Test("lines are alike but for librdkafka's thread prefix and the numbers that change with every attempt")
    func kinds() {
        #expect(
            KafkaLogs.kind(of: "[thrd:GroupCoordinator]: GroupCoordinator/1: Timed out HeartbeatRequest in flight (after 6005ms, timeout #0)")
                == KafkaLogs.kind(of: "GroupCoordinator/1: Timed out HeartbeatRequest in flight (after 12ms, timeout #3)"))
        #expect(KafkaLogs.kind(of: "b-1:9092/1: Connect failed") != KafkaLogs.kind(of: "b-2:9092/2: Connect failed"))
        #expect(KafkaLogs.kind(of: "2/3 brokers are down") != KafkaLogs.kind(of: "3/3 brokers are down"))
    }

    @Test("RepeatedLines: the first of a kind, then one per period with the count held back; forgotten kinds beyond its capacity are written again")
    func repeatedLines() {
        let t0 = ContinuousClock.now
        var lines = RepeatedLines(period: .seconds(30))
        #expect(lines.admit("a", at: t0) == .write(heldBack: 0))
        #expect(lines.admit("a", at: t0 + .seconds(29)) == .hold)
        #expect(lines.admit("b", at: t0 + .seconds(29)) == .write(heldBack: 0))
        #expect(lines.admit("a", at: t0 + .seconds(30)) == .write(heldBack: 1))
        #expect(lines.admit("a", at: t0 + .seconds(31)) == .hold)
        for i in 0..<RepeatedLines.capacity { _ = lines.admit("k\(i)", at: t0 + .seconds(31)) }
        #expect(lines.admit("k0", at: t0 + .seconds(32)) == .hold)
        #expect(lines.admit("a", at: t0 + .seconds(32)) == .write(heldBack: 0))  // forgotten: written anew
    }
}

/// Entries as a swift-log handler receives them.
final class Captured: Sendable {
    struct Entry: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let store = Mutex<[Entry]>([])
    var entries: [Entry] { store.withLock { $0 } }

    var handler: Handler { Handler(captured: self) }

    struct Handler: LogHandler {
        let captured: Captured
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let entry = Entry(
                level: event.level, message: event.message.description,
                metadata: (event.metadata ?? [:]).mapValues { $0.description })
            captured.store.withLock { $0.append(entry) }
        }
    }
}
