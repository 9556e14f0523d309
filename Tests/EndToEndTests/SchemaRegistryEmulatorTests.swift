import Foundation
import Kafka
import TestSupport
import Testing

/// The Schema Registry emulator (`Tests/TestSupport/Resources/schema_registry.py`) checked against
/// Confluent's own client: records produced by confluent-kafka 2.16.1's AvroSerializer and
/// ProtobufSerializer (`produce_records.py`) to tansu through the emulator, read back with our
/// plain consumer, and the registry's answers about them. If the real client can work with the
/// emulator and the frames carry the IDs the emulator gave, pushbridge's registry client is
/// tested against Confluent's behaviour, not against our own reading of it.
@Suite("Schema Registry emulator with Confluent's serializers", .serialized)
struct SchemaRegistryEmulatorTests {
    static let orderShipped = "5b6f7a1e-2c1d-4f8a-9a51-0d3c4b2a1f00"

    @Test("Avro: magic byte 0 and the registry's ID in every frame; the reference resolves")
    func avro() async throws {
        let (tansu, registry) = try await startBrokerAndRegistry(topics: ["orders-avro"])
        let produced = try await SchemaProducer.run(
            format: .avro, schema: SchemaProducer.fixture("avro/acme.orders.OrderShipped.avsc"),
            records: SchemaProducer.fixture("records/order-shipped.avro.jsonl"), topic: "orders-avro", brokers: tansu.bootstrapServers,
            registry: registry, references: [SchemaProducer.fixture("avro/acme.common.Address.avsc")])
        #expect(produced.produced == 3)

        let latest = try await registry.request("GET", "/subjects/orders-avro-value/versions/latest")
        #expect(latest.status == 200)
        #expect(latest.contentType == "application/vnd.schemaregistry.v1+json")
        let id = try #require(latest.object?["id"] as? Int)
        #expect(latest.object?["version"] as? Int == 1)
        #expect(latest.object?["schemaType"] == nil, "AVRO is the default and left out: \(latest.body)")
        #expect(produced.schemaIDs == [id])

        let messages = try await readMessages("orders-avro", count: 3, brokers: tansu.bootstrapServers)
        #expect(messages.count == 3)
        for message in messages {
            #expect(message.value.first == 0)
            #expect(schemaID(message.value) == id)
        }
        // The body is Avro: the first field (order_id, a string) is its zigzag length, then UTF-8.
        let first = try #require(messages.first).value
        #expect(first[5] == UInt8(Self.orderShipped.utf8.count * 2))
        #expect(Array(first[6..<(6 + 36)]) == Array(Self.orderShipped.utf8))
        #expect(messages.first?.key == Array("u-1001".utf8))
        #expect(messages.first?.header("source")?.stringValue == "produce_records")

        // The reference: registered under its own subject, named in the schema, resolvable.
        let schema = try await registry.request("GET", "/schemas/ids/\(id)")
        let references = try #require(schema.object?["references"] as? [[String: Any]])
        #expect(references.count == 1)
        #expect(references.first?["name"] as? String == "acme.common.Address")
        #expect(references.first?["subject"] as? String == "acme.common.Address")
        #expect(references.first?["version"] as? Int == 1)
        let address = try await registry.request("GET", "/subjects/acme.common.Address/versions/1")
        #expect(address.object?["id"] as? Int == produced.references.first?.id)
        #expect((address.object?["schema"] as? String)?.contains("\"name\":\"Address\"") == true, "\(address.body)")
    }

    @Test("Protobuf: message indexes after the ID, format=serialized gives what the serializer registered")
    func protobuf() async throws {
        let (tansu, registry) = try await startBrokerAndRegistry(topics: ["orders-proto", "order-lines"])
        let ids = try await SchemaProducer.produce(
            format: .protobuf, schema: SchemaProducer.fixture("protobuf/acme/orders/v1/orders.proto"),
            message: "acme.orders.v1.OrderShipped", records: SchemaProducer.fixture("records/order-shipped.protobuf.jsonl"),
            topic: "orders-proto", brokers: tansu.bootstrapServers, registry: registry, protoPaths: [SchemaProducer.fixture("protobuf")])
        let latest = try await registry.request("GET", "/subjects/orders-proto-value/versions/latest?format=serialized")
        let id = try #require(latest.object?["id"] as? Int)
        #expect(ids == [id])

        let messages = try await readMessages("orders-proto", count: 2, brokers: tansu.bootstrapServers)
        #expect(messages.count == 2)
        for message in messages {
            #expect(message.value.first == 0)
            #expect(schemaID(message.value) == id)
            // OrderShipped is the file's second message: indexes [1], as zigzag varints (count 1, index 1).
            #expect(Array(message.value[5..<7]) == [0x02, 0x02])
        }
        // The body is protobuf: field 1 (order_id), length-delimited.
        let first = try #require(messages.first).value
        #expect(Array(first[7..<9]) == [0x0A, 6])
        #expect(Array(first[9..<15]) == Array("A-2001".utf8))

        let log = try await registry.requestLog()
        let registered = try #require(log.first { $0.method == "POST" && $0.target.hasPrefix("/subjects/orders-proto-value/versions") })
        let sent = try #require(jsonObject(registered.body)?["schema"] as? String)
        let serialized = try await registry.request("GET", "/schemas/ids/\(id)?format=serialized")
        #expect(serialized.object?["schema"] as? String == sent)
        #expect(serialized.object?["schemaType"] as? String == "PROTOBUF")
        let references = try #require(serialized.object?["references"] as? [[String: Any]])
        #expect(references.map { $0["name"] as? String } == ["acme/orders/v1/common.proto"])
        #expect(references.map { $0["subject"] as? String } == ["acme/orders/v1/common.proto"])
        #expect(references.map { $0["version"] as? Int } == [1])
        #expect(!log.contains { $0.target.contains("google") }, "well-known types are not registered")

        // The reference resolves, by subject and version, to what the serializer registered for it:
        // a base64 FileDescriptorProto whose field 1 is the file's name.
        let subject = SchemaRegistryServer.encode(subject: "acme/orders/v1/common.proto")
        let referenced = try await registry.request("GET", "/subjects/\(subject)/versions/1?format=serialized")
        let referenceSent = log.first { $0.method == "POST" && $0.target.hasPrefix("/subjects/\(subject)/versions") }
        let referenceSchema = try #require(referenced.object?["schema"] as? String)
        #expect(referenceSchema == referenceSent.flatMap { jsonObject($0.body)?["schema"] as? String })
        let descriptor = try #require(Data(base64Encoded: referenceSchema))
        #expect(Array(descriptor.prefix(2)) == [0x0A, 27])
        #expect(String(decoding: descriptor.dropFirst(2).prefix(27), as: UTF8.self) == "acme/orders/v1/common.proto")

        // A nested message: indexes [1, 0]; the same file under another subject keeps its ID.
        let lines = try writeRecords(["{\"value\": {\"sku\": \"KB-01\", \"quantity\": 3}}"])
        let lineIDs = try await SchemaProducer.produce(
            format: .protobuf, schema: SchemaProducer.fixture("protobuf/acme/orders/v1/orders.proto"),
            message: "acme.orders.v1.OrderShipped.Line", records: lines, topic: "order-lines", brokers: tansu.bootstrapServers,
            registry: registry, protoPaths: [SchemaProducer.fixture("protobuf")])
        #expect(lineIDs == [id])
        let line = try #require(try await readMessages("order-lines", count: 1, brokers: tansu.bootstrapServers).first)
        #expect(Array(line.value[5..<8]) == [0x04, 0x02, 0x00])

        // The serializer's other modes find the same ID: the latest version (its schema and its
        // reference fetched with format=serialized), and a lookup under the subject.
        for mode: SchemaProducer.Mode in [.latestVersion, .lookUp] {
            try await registry.clearRequests()
            let found = try await SchemaProducer.produce(
                format: .protobuf, schema: SchemaProducer.fixture("protobuf/acme/orders/v1/orders.proto"),
                message: "acme.orders.v1.OrderShipped", records: SchemaProducer.fixture("records/order-shipped.protobuf.jsonl"),
                topic: "orders-proto", brokers: tansu.bootstrapServers, registry: registry, protoPaths: [SchemaProducer.fixture("protobuf")],
                mode: mode)
            #expect(found == [id])
            let asked = try await registry.requests()
            switch mode {
            case .latestVersion:
                #expect(asked.contains("GET /subjects/orders-proto-value/versions/latest?format=serialized"), "\(asked)")
                #expect(asked.contains("GET /subjects/\(subject)/versions/1?deleted=true&format=serialized"), "\(asked)")
            default:
                #expect(asked.contains("POST /subjects/orders-proto-value?normalize=False&deleted=False"), "\(asked)")
            }
            #expect(!asked.contains { $0.hasPrefix("POST /subjects/orders-proto-value/versions") }, "nothing registered: \(asked)")
        }
    }

    @Test("the same schema under two subjects has one ID; a changed schema gets a new one")
    func globalIDs() async throws {
        let (tansu, registry) = try await startBrokerAndRegistry(topics: ["left", "right"])
        var ids: [String: [Int]] = [:]
        for topic in ["left", "right", "left"] {
            ids[topic, default: []] += try await SchemaProducer.produce(
                format: .avro, schema: SchemaProducer.fixture("avro/acme.orders.OrderShipped.avsc"),
                records: SchemaProducer.fixture("records/order-shipped.avro.jsonl"), topic: topic, brokers: tansu.bootstrapServers,
                registry: registry, references: [SchemaProducer.fixture("avro/acme.common.Address.avsc")])
        }
        let id = try #require(ids["left"]?.first)
        #expect(ids["left"] == [id, id])
        #expect(ids["right"] == [id])
        // Registering it again under the same subject is not a new version.
        #expect(try await registry.request("GET", "/subjects/left-value/versions").json as? [Int] == [1])
        let pairs = try await registry.request("GET", "/schemas/ids/\(id)/versions").json as? [[String: Any]]
        #expect(pairs?.map { "\($0["subject"] ?? "")@\($0["version"] ?? "")" } == ["left-value@1", "right-value@1"])

        let address = try writeRecords(["{\"value\": {\"city\": \"Lyon\", \"country\": \"FR\"}}"])
        let changed = try await SchemaProducer.produce(
            format: .avro, schema: SchemaProducer.fixture("avro/acme.common.Address.avsc"), records: address, topic: "left",
            brokers: tansu.bootstrapServers, registry: registry)
        let newID = try #require(changed.first)
        #expect(newID != id)
        #expect(try await registry.request("GET", "/subjects/left-value/versions").json as? [Int] == [1, 2])
        let second = try await registry.request("GET", "/subjects/left-value/versions/2")
        #expect(second.object?["id"] as? Int == newID)
        let message = try await readMessages("left", count: 7, brokers: tansu.bootstrapServers).last
        #expect(message.flatMap { schemaID($0.value) } == newID)
    }

    @Test("errors: Confluent's status, error_code and content type")
    func errors() async throws {
        let registry = try await SchemaRegistryServer.start()
        let unknown = try await registry.request("GET", "/schemas/ids/424242")
        #expect(unknown.status == 404)
        #expect(unknown.errorCode == 40403)
        #expect(unknown.object?["message"] is String)
        #expect(unknown.contentType == "application/vnd.schemaregistry.v1+json")

        let registered = try await registry.request("POST", "/subjects/s-value/versions", body: #"{"schema": "{\"type\": \"string\"}"}"#)
        #expect(registered.status == 200)
        #expect(registered.object?["id"] as? Int == 1)
        #expect(try await registry.request("GET", "/subjects/nope/versions/1").errorCode == 40401)
        #expect(try await registry.request("GET", "/subjects/nope/versions").errorCode == 40401)
        #expect(try await registry.request("GET", "/subjects/s-value/versions/2").errorCode == 40402)
        let badVersion = try await registry.request("GET", "/subjects/s-value/versions/0")
        #expect(badVersion.status == 422)
        #expect(badVersion.errorCode == 42202)
        #expect(try await registry.request("GET", "/subjects/s-value/versions/latest").object?["schema"] as? String == #"{"type":"string"}"#)

        let undefinedName = #"{"schema": "{\"type\":\"record\",\"name\":\"A\",\"fields\":[{\"name\":\"b\",\"type\":\"Missing\"}]}"}"#
        let invalid = try await registry.request("POST", "/subjects/s-value/versions", body: undefinedName)
        #expect(invalid.status == 422)
        #expect(invalid.errorCode == 42201)
        let missingReference = #"{"schema": "\"string\"", "references": [{"name": "X", "subject": "none", "version": 1}]}"#
        #expect(try await registry.request("POST", "/subjects/s-value/versions", body: missingReference).errorCode == 42201)

        // Lookup: the subject must exist (40401) and hold the schema (40403).
        let long = #"{"schema": "{\"type\": \"long\"}"}"#
        #expect(try await registry.request("POST", "/subjects/s-value", body: long).errorCode == 40403)
        #expect(try await registry.request("POST", "/subjects/other", body: long).errorCode == 40401)

        // schemaType is there for the other types.
        let json = #"{"schemaType": "JSON", "schema": "{\"type\": \"object\"}"}"#
        let jsonID = try #require(try await registry.request("POST", "/subjects/j-value/versions", body: json).object?["id"] as? Int)
        #expect(try await registry.request("GET", "/schemas/ids/\(jsonID)").object?["schemaType"] as? String == "JSON")
    }

    @Test("Basic credentials: refused without them (401), accepted with them")
    func basicAuth() async throws {
        let (tansu, registry) = try await startBrokerAndRegistry(topics: ["secured"], user: "pushbridge", password: "s3cret:with-colon")
        let schema = SchemaProducer.fixture("avro/acme.common.Address.avsc")
        let records = try writeRecords(["{\"value\": {\"city\": \"Lyon\", \"country\": \"FR\"}}"])
        for auth: SchemaRegistryServer.Auth in [.none, .basic(.init(user: "pushbridge", password: "wrong"))] {
            let refused = await #expect(throws: SchemaProducer.Failure.self) {
                try await SchemaProducer.produce(
                    format: .avro, schema: schema, records: records, topic: "secured", brokers: tansu.bootstrapServers, registry: registry,
                    auth: auth)
            }
            #expect(refused?.output.contains("401") == true, "\(refused?.output ?? "")")
        }
        let ids = try await SchemaProducer.produce(
            format: .avro, schema: schema, records: records, topic: "secured", brokers: tansu.bootstrapServers, registry: registry)
        #expect(ids.count == 1)

        let anonymous = try await registry.request("GET", "/subjects", auth: .none)
        #expect(anonymous.status == 401)
        #expect(anonymous.errorCode == 401)
        #expect(anonymous.wwwAuthenticate?.hasPrefix("Basic ") == true)
        #expect(try await registry.request("GET", "/subjects").json as? [String] == ["secured-value"])
        #expect(try await registry.requestLog().filter { $0.status == 401 }.count >= 3)
    }

    @Test("TLS with a test CA: trusted with the CA, refused without it")
    func tls() async throws {
        let certificates = try TestCertificates.shared
        let (tansu, registry) = try await startBrokerAndRegistry(topics: ["tls"], tls: certificates)
        #expect(registry.url.hasPrefix("https://127.0.0.1:"))
        let schema = SchemaProducer.fixture("avro/acme.common.Address.avsc")
        let records = try writeRecords(["{\"value\": {\"city\": \"Lyon\", \"country\": \"FR\"}}"])
        let untrusted = await #expect(throws: SchemaProducer.Failure.self) {
            try await SchemaProducer.produce(
                format: .avro, schema: schema, records: records, topic: "tls", brokers: tansu.bootstrapServers, registry: registry,
                trust: .systemRoots, registryRetries: 0)
        }
        #expect(untrusted?.output.contains("CERTIFICATE_VERIFY_FAILED") == true, "\(untrusted?.output ?? "")")
        let ids = try await SchemaProducer.produce(
            format: .avro, schema: schema, records: records, topic: "tls", brokers: tansu.bootstrapServers, registry: registry)
        #expect(ids.count == 1)
        await #expect(throws: SchemaRegistryServer.NoAnswer.self) { try await registry.request("GET", "/subjects", trust: .systemRoots) }
        #expect(try await registry.request("GET", "/schemas/ids/\(ids[0])").status == 200)
    }

    @Test("faults: 503 twice then served (the client retries); too many fail it; a delay delays")
    func faults() async throws {
        let (tansu, registry) = try await startBrokerAndRegistry(topics: ["faulty"])
        let schema = SchemaProducer.fixture("avro/acme.common.Address.avsc")
        let records = try writeRecords(["{\"value\": {\"city\": \"Lyon\", \"country\": \"FR\"}}"])
        try await registry.injectFaults(status: 503, count: 2)
        let ids = try await SchemaProducer.produce(
            format: .avro, schema: schema, records: records, topic: "faulty", brokers: tansu.bootstrapServers, registry: registry)
        #expect(ids.count == 1)
        let statuses = try await registry.requestLog().map(\.status)
        #expect(Array(statuses.prefix(3)) == [503, 503, 200], "\(statuses)")

        // More failures than the client retries (one retry: two attempts per request).
        try await registry.clearRequests()
        try await registry.injectFaults(status: 503, count: 2)
        let failed = await #expect(throws: SchemaProducer.Failure.self) {
            try await SchemaProducer.produce(
                format: .avro, schema: schema, records: records, topic: "faulty", brokers: tansu.bootstrapServers, registry: registry,
                registryRetries: 1)
        }
        #expect(failed?.output.contains("503") == true, "\(failed?.output ?? "")")

        // Only requests under the prefix; 500 carries the store error's code.
        try await registry.injectFaults(status: 500, count: 1, pathPrefix: "/schemas/ids")
        #expect(try await registry.request("GET", "/subjects").status == 200)
        let failedOnce = try await registry.request("GET", "/schemas/ids/\(ids[0])")
        #expect(failedOnce.status == 500)
        #expect(failedOnce.errorCode == 50001)
        #expect(try await registry.request("GET", "/schemas/ids/\(ids[0])").status == 200)

        try await registry.setDelay(.milliseconds(400))
        let start = ContinuousClock.now
        #expect(try await registry.request("GET", "/subjects").status == 200)
        #expect(ContinuousClock.now - start >= .milliseconds(400))
        try await registry.setDelay(.zero)
        #expect(try await registry.requests().last == "GET /subjects")
    }

    @Test("a restart keeps schemas, IDs and versions")
    func restart() async throws {
        let (tansu, registry) = try await startBrokerAndRegistry(topics: ["kept"])
        let produce = {
            try await SchemaProducer.produce(
                format: .avro, schema: SchemaProducer.fixture("avro/acme.orders.OrderShipped.avsc"),
                records: SchemaProducer.fixture("records/order-shipped.avro.jsonl"), topic: "kept", brokers: tansu.bootstrapServers,
                registry: registry, references: [SchemaProducer.fixture("avro/acme.common.Address.avsc")])
        }
        let before = try await produce()
        let schemaBefore = try await registry.request("GET", "/schemas/ids/\(before[0])").body
        let subjectsBefore = try await registry.request("GET", "/subjects").body

        try await registry.restart()
        #expect(try await registry.requests().isEmpty)
        #expect(try await registry.request("GET", "/schemas/ids/\(before[0])").body == schemaBefore)
        #expect(try await registry.request("GET", "/subjects").body == subjectsBefore)
        #expect(try await produce() == before)
        #expect(try await registry.request("GET", "/subjects/kept-value/versions").json as? [Int] == [1])
        let next = try await registry.request("POST", "/subjects/other/versions", body: #"{"schema": "\"int\""}"#)
        #expect(next.object?["id"] as? Int == (before.max() ?? 0) + 1, "IDs go on after a restart: \(next.body)")
    }
}
