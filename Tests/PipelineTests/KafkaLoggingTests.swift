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
        "a refused connection every 50 ms for 65 s: the librdkafka line and the client error alike make one line at the start, a count every 30 s, and one line 60 s after they stop, each with the first line's text"
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
            if attempt % 100 == 0 { logs.summary.tick() }  // the worker ticks every 5 s
        }
        clock.advance(.seconds(25))
        logs.summary.tick()
        #expect(captured.entries.count == 4, "the last period's count")
        clock.advance(.seconds(34))
        logs.summary.tick()
        #expect(captured.entries.count == 4, "not two periods without one yet")
        clock.advance(.seconds(1))
        logs.summary.tick()
        logs.summary.tick()
        let entries = captured.entries
        #expect(entries.count == 5, "\(entries.map(\.message))")
        #expect(entries.map { $0.metadata["repeated"] } == [nil, "1200", "1200", "199", nil])
        #expect(entries.map { $0.metadata["lasting"] } == [nil, "30s", "1m0s", "1m4s", nil])
        #expect(entries.allSatisfy { $0.metadata["librdkafka"] == "FAIL" && $0.message.hasSuffix("(after 0ms in state CONNECT)") })
        #expect(entries.last?.level == .notice)
        #expect(entries.last?.message.hasPrefix("ended: ") == true)
        #expect(entries.last?.metadata["total"] == "2600")
        #expect(entries.last?.metadata["lasted"] == "1m4s")
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

    @Test("lines are alike but for librdkafka's thread prefix, the client's name and the numbers that change with every attempt")
    func kinds() {
        #expect(
            KafkaLogs.kind(of: "[thrd:GroupCoordinator]: GroupCoordinator/1: Timed out HeartbeatRequest in flight (after 6005ms, timeout #0)")
                == KafkaLogs.kind(of: "GroupCoordinator/1: Timed out HeartbeatRequest in flight (after 12ms, timeout #3)"))
        #expect(KafkaLogs.kind(of: "b-1:9092/1: Connect failed") != KafkaLogs.kind(of: "b-2:9092/2: Connect failed"))
        #expect(
            KafkaLogs.kind(of: "[thrd:app]: pushbridge#producer-1: b-1:9092/bootstrap: Connect failed")
                == KafkaLogs.kind(of: "[thrd:b-1:9092/bootstrap]: b-1:9092/bootstrap: Connect failed"), "the producer's and the consumer's")
        #expect(KafkaLogs.kind(of: "2/3 brokers are down") != KafkaLogs.kind(of: "3/3 brokers are down"))
    }

    @Test("RepeatedLines: the first of a kind, a count per period while it repeats (with the first line), its end after two periods without it")
    func repeatedLines() {
        let t0 = ContinuousClock.now
        var lines = RepeatedLines<String>(period: .seconds(30))
        #expect(lines.admit("a", "a1", at: t0).map(Self.describe) == ["started a1"])
        #expect(lines.admit("a", "a2", at: t0 + .seconds(10)).isEmpty)
        #expect(lines.admit("b", "b1", at: t0 + .seconds(29)).map(Self.describe) == ["started b1"])
        #expect(lines.tick(at: t0 + .seconds(29)).isEmpty)
        #expect(lines.admit("a", "a3", at: t0 + .seconds(30)).map(Self.describe) == ["continuing a1 2/3 30s"])
        #expect(lines.admit("a", "a4", at: t0 + .seconds(31)).isEmpty)
        #expect(lines.tick(at: t0 + .seconds(60)).map(Self.describe) == ["continuing a1 1/4 31s"])
        #expect(lines.tick(at: t0 + .seconds(90)).isEmpty)
        #expect(lines.tick(at: t0 + .seconds(91)).map(Self.describe) == ["ended a1 4 31s"], "b: one line, ends silently")
        #expect(lines.tick(at: t0 + .seconds(150)).isEmpty)
        #expect(lines.admit("a", "a5", at: t0 + .seconds(151)).map(Self.describe) == ["started a5"], "a new incident")
    }

    @Test("RepeatedLines without ticks: a line after two periods of quiet ends the incident before it and starts a new one")
    func untickedEnd() {
        let t0 = ContinuousClock.now
        var lines = RepeatedLines<String>(period: .seconds(30))
        _ = lines.admit("a", "a1", at: t0)
        _ = lines.admit("a", "a2", at: t0 + .seconds(5))
        #expect(lines.admit("a", "a3", at: t0 + .seconds(50)).map(Self.describe) == ["continuing a1 2/3 50s"], "the same incident")
        #expect(lines.admit("a", "a4", at: t0 + .seconds(110)).map(Self.describe) == ["ended a1 3 50s", "started a4"])
    }

    @Test("RepeatedLines beyond its capacity: the kind seen longest ago ends early, with its count")
    func capacity() {
        let t0 = ContinuousClock.now
        var lines = RepeatedLines<String>(period: .seconds(30))
        _ = lines.admit("old", "o1", at: t0)
        _ = lines.admit("old", "o2", at: t0)
        for i in 0..<(RepeatedLines<String>.capacity - 1) { _ = lines.admit("k\(i)", "k", at: t0 + .seconds(1)) }
        #expect(lines.admit("new", "n1", at: t0 + .seconds(2)).map(Self.describe) == ["ended o1 2 0s", "started n1"])
    }

    static func describe(_ summary: RepeatedLines<String>.Summary) -> String {
        switch summary {
        case .started(let line): "started \(line)"
        case .continuing(let line, let count, let total, let lasting): "continuing \(line) \(count)/\(total) \(lasting.roundedToSeconds)"
        case .ended(let line, let total, let lasted): "ended \(line) \(total) \(lasted.roundedToSeconds)"
        }
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
