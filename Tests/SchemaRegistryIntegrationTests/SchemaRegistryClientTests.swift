import Foundation
import Logging
import RecordDecoding
import TestSupport
import Testing

@testable import SchemaRegistry

/// The client against the registry emulator (Tests/TestSupport/Resources/schema_registry.py,
/// held to confluent-kafka's own client in SchemaRegistryEmulatorTests): HTTPS with a test CA,
/// basic auth, references, and what it does when the registry cannot answer or says no.
@Suite("SchemaRegistryClient against the registry emulator", .serialized)
struct SchemaRegistryClientTests {
    static let address = #"{"type":"record","name":"Address","namespace":"acme.common","fields":[{"name":"city","type":"string"}]}"#
    static let order =
        #"{"type":"record","name":"Order","namespace":"acme","fields":[{"name":"id","type":"string"},{"name":"to","type":"acme.common.Address"}]}"#

    /// Registers Address, then Order referencing it; returns Order's ID.
    static func registerOrder(_ registry: SchemaRegistryServer) async throws -> UInt32 {
        func body(_ schema: String, references: String = "") throws -> String {
            let text = String(decoding: try JSONSerialization.data(withJSONObject: schema, options: [.fragmentsAllowed]), as: UTF8.self)
            return #"{"schema":\#(text)\#(references)}"#
        }
        let address = try await registry.request("POST", "/subjects/acme.common.Address/versions", body: try body(Self.address))
        #expect(address.status == 200, "\(address.body)")
        let order = try await registry.request(
            "POST", "/subjects/orders-value/versions",
            body: try body(Self.order, references: #","references":[{"name":"acme.common.Address","subject":"acme.common.Address","version":1}]"#))
        return UInt32(try #require(order.object?["id"] as? Int))
    }

    static func client(_ registry: SchemaRegistryServer, password: String? = "pw") throws -> SchemaRegistryClient {
        var configuration = SchemaRegistryClient.Configuration(
            url: registry.url, username: registry.credentials?.user, password: password, caFile: registry.caFile)
        configuration.initialBackoff = .milliseconds(50)
        return try SchemaRegistryClient(configuration: configuration, logger: Logger(label: "test"))
    }

    @Test("over HTTPS with basic auth: the schema and its reference, fetched once however often asked")
    func fetchesWithReferences() async throws {
        let registry = try await SchemaRegistryServer.start(tls: TestCertificates.shared, user: "sr", password: "pw")
        let id = try await Self.registerOrder(registry)
        try await registry.clearRequests()
        let client = try Self.client(registry)
        for _ in 0..<3 {
            let schema = try await client.schema(id: id)
            guard case .avro(let avro) = schema else {
                Issue.record("not Avro: \(schema.kind)")
                return
            }
            #expect(avro.fullName == "acme.Order")
        }
        let requests = try await registry.requestLog()
        #expect(requests.map(\.target) == ["/schemas/ids/\(id)", "/subjects/acme.common.Address/versions/1"], "\(requests.map(\.target))")
        #expect(requests.allSatisfy { $0.status == 200 })
        await client.shutdown()
        await registry.stop()
    }

    @Test("503s are retried until the registry answers; a refused login is retried, never a failure, until the task is cancelled")
    func retries() async throws {
        let registry = try await SchemaRegistryServer.start(tls: TestCertificates.shared, user: "sr", password: "pw")
        let id = try await Self.registerOrder(registry)
        try await registry.injectFaults(status: 503, count: 3, pathPrefix: "/schemas/ids/")
        try await registry.clearRequests()
        let client = try Self.client(registry)
        #expect(try await client.schema(id: id).kind == .avro)
        #expect(try await registry.requests().count { $0.hasPrefix("GET /schemas/ids/") } == 4)

        let refused = try Self.client(registry, password: "wrong")
        let lookup = Task { try await refused.schema(id: id) }
        // Refused, and asked again (200 ms later, then 400 ms: however long a loaded machine takes).
        var statuses: [Int] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while statuses.count(where: { $0 == 401 }) < 2, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(100))
            statuses = try await registry.requestLog().filter { $0.target.hasPrefix("/schemas/ids/") }.map(\.status)
        }
        #expect(statuses.count { $0 == 401 } >= 2, "\(statuses)")
        lookup.cancel()
        await #expect(throws: SchemaLookupError.cancelled) { try await lookup.value }
        await client.shutdown()
        await refused.shutdown()
        await registry.stop()
    }

    @Test("an ID the registry does not have is not found after three answers; a lookup after shutdown ends as cancelled")
    func notFound() async throws {
        let registry = try await SchemaRegistryServer.start()
        let client = try Self.client(registry, password: nil)
        await #expect(throws: SchemaLookupError.notFound(id: 4242)) { try await client.schema(id: 4242) }
        #expect(try await registry.requests().filter { $0.hasPrefix("GET /schemas/ids/4242") }.count == 3)
        await client.shutdown()
        await #expect(throws: SchemaLookupError.cancelled) { try await client.schema(id: 1) }
        await registry.stop()
    }
}
