import Foundation
import Logging
import RecordDecoding
import Synchronization
import TestSupport
import Testing

@testable import SchemaRegistry

/// The registry's connection going silent (``SilentRelay`` in front of the registry emulator,
/// which speaks HTTP/1.1 as registries behind most load balancers do): the fetch times out after
/// the request timeout, libcurl closes an HTTP/1.1 connection whose request timed out, and the
/// retry goes on a new one. (An HTTP/2 connection is closed by the client's liveness check:
/// `DeadConnectionTests`.)
@Suite("SchemaRegistryClient: a registry connection that goes silent", .serialized)
struct SchemaRegistryDeadConnectionTests {
    @Test("a fetch on a connection gone silent is tried again on a new connection within the request timeout, and says so")
    func fetchGoesOnANewConnection() async throws {
        let registry = try await SchemaRegistryServer.start(tls: TestCertificates.shared, user: "sr", password: "pw")
        let id = try await SchemaRegistryClientTests.registerOrder(registry)
        let relay = try await SilentRelay.start(to: registry.port)
        let lines = LogLines()
        var configuration = SchemaRegistryClient.Configuration(
            url: "https://127.0.0.1:\(relay.port)", username: "sr", password: "pw", caFile: registry.caFile)
        configuration.initialBackoff = .milliseconds(50)
        let client = try SchemaRegistryClient(configuration: configuration, logger: Logger(label: "test") { _ in lines })
        // Address first: its connection is the one that goes silent.
        _ = try await client.schema(id: id - 1)
        try await relay.silence()

        let started = ContinuousClock.now
        let schema = try await client.schema(id: id)
        guard case .avro(let avro) = schema else {
            Issue.record("not Avro: \(schema.kind)")
            return
        }
        #expect(avro.fullName == "acme.Order")
        // One request timeout (10 s) and a backoff, far from the kernel's ~15 minutes.
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(lines.messages.contains { $0.hasPrefix("warning: cannot fetch from the Schema Registry") }, "\(lines.messages)")
        #expect(lines.messages.contains { $0.hasPrefix("info: the Schema Registry answers again") }, "\(lines.messages)")
        await client.shutdown()
        await registry.stop()
    }
}

/// Log lines as a swift-log handler receives them.
final class LogLines: LogHandler, Sendable {
    private let store = Mutex<[String]>([])
    var messages: [String] { store.withLock { $0 } }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        store.withLock { $0.append("\(event.level): \(event.message)") }
    }
}
