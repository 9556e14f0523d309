import Kafka
import Logging
import Pipeline
import Synchronization
import Testing

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
        let handler = logger.kafkaErrorHandler
        handler(KafkaError(code: .transport, message: "b/1: Disconnected", isRetryable: true))
        handler(KafkaError(code: .authentication, message: "SASL authentication error"))
        handler(KafkaError(code: .ssl, message: "certificate verify failed"))
        handler(KafkaError(code: .requestTimedOut, message: "x", isFatal: true))
        #expect(captured.entries.map(\.level) == [.warning, .error, .error, .error])
        #expect(captured.entries[1].message.hasPrefix("kafka: KafkaError(_AUTHENTICATION"), "\(captured.entries[1].message)")
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
