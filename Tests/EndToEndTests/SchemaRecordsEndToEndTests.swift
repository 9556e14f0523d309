import FCMEmulator
import Foundation
import Kafka
import Mapping
import TestSupport
import Testing

/// Avro and Protobuf topics end to end: records written by Confluent's own Python serializers
/// (confluent-kafka 2.16.1) through the Schema Registry emulator to tansu, read by `pushbridge
/// run` (a separate process) with their writer schemas fetched from the registry, and the pushes
/// checked at the FCM emulator argument by argument.
@Suite("Avro and Protobuf topics: pushbridge run with a Schema Registry (separate process, tansu)", .serialized)
struct SchemaRecordsEndToEndTests {
    /// Keyed by the records' full names; one JSON event of the same type shares the topic.
    static let mapping = """
        version: 1
        events:
          acme.orders.OrderShipped:
            target: {topic: {field: /user_id}}
            title: {key: order_shipped_title, args: [{field: /order_id}]}
            body:
              key: order_shipped_body
              args:
                - {field: /total}
                - {field: /carrier}
                - {field: /ship_to/city}
                - {field: /shipped_at}
                - {field: /tracking, default: "-"}
                - {field: /delivery_date, default: "-"}
          acme.orders.v1.OrderShipped:
            target: {topic: {field: /user_id}}
            body:
              key: order_shipped_body
              args:
                - {field: /total/units}
                - {field: /carrier}
                - {field: /ship_to/city}
                - {field: /shipped_at}
                - {field: /tracking_number, default: "-"}
                - {field: /note, default: "-"}
        """

    /// The body args each topic (user) received.
    static func bodyArgs(_ emulator: FCMEmulator) -> [String: [String]] {
        var args: [String: [String]] = [:]
        for m in emulator.messages {
            guard let topic = m.topic, case .array(let items)? = m.message["android"]?["notification"]?["body_loc_args"] else { continue }
            args[topic] = items.compactMap(\.stringValue)
        }
        return args
    }

    static func deadLetters(_ e: EndToEnd) async throws -> [String: String] {
        let dead = try await e.events.readAll(e.deadLetterTopic, idle: .seconds(3))
        var reasons: [String: String] = [:]
        for d in dead {
            reasons[d.header("pushbridge-reason-code")?.stringValue ?? "?"] = d.header("pushbridge-reason")?.stringValue ?? ""
        }
        return reasons
    }

    @Test(
        "Avro (a decimal, timestamps, a date, an enum, unions, a referenced record) and Protobuf (Timestamp, int64, enum, oneof, optional, an import) become the documented strings; JSON still works beside them"
    )
    func decodes() async throws {
        let e = try await EndToEnd(partitions: 2)
        let registry = try await SchemaRegistryServer.start(user: "pushbridge", password: "sr-secret")
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let avroIDs = try await SchemaProducer.produce(
            format: .avro, schema: SchemaProducer.fixture("avro/acme.orders.OrderShipped.avsc"),
            records: SchemaProducer.fixture("records/order-shipped.avro.jsonl"), topic: e.topic, brokers: e.bootstrapServers,
            registry: registry, references: [SchemaProducer.fixture("avro/acme.common.Address.avsc")])
        let protoIDs = try await SchemaProducer.produce(
            format: .protobuf, schema: SchemaProducer.fixture("protobuf/acme/orders/v1/orders.proto"), message: "acme.orders.v1.OrderShipped",
            records: SchemaProducer.fixture("records/order-shipped.protobuf.jsonl"), topic: e.topic, brokers: e.bootstrapServers,
            registry: registry, protoPaths: [SchemaProducer.fixture("protobuf")])
        #expect(avroIDs.count == 1 && protoIDs.count == 1 && avroIDs != protoIDs, "one schema each: \(avroIDs), \(protoIDs)")
        try await e.produceRaw([
            #"{"type":"acme.orders.OrderShipped","user_id":"u-json","order_id":"J-1","total":"9.99","carrier":"DHL","ship_to":{"city":"Oslo"},"shipped_at":"2026-03-14T12:00:00Z"}"#
        ])
        try await registry.clearRequests()

        let worker = try await e.startWorker(
            group: "e2e-schemas", sections: "schema_registry: {url: \"\(registry.url)\", username: pushbridge}",
            environment: ["PUSHBRIDGE_SCHEMA_REGISTRY_PASSWORD": "sr-secret"])
        let emulator = e.emulator
        try #require(await eventually(timeout: .seconds(90)) { Self.bodyArgs(emulator).count == 6 }, "\(worker.output.suffix(3000))")
        let args = Self.bodyArgs(emulator)
        // Avro: decimal at its scale, timestamp-millis as RFC 3339 UTC, the enum's symbol, the
        // union's branch itself (a long among null/string/long), a date, a referenced record's field.
        #expect(args["u-1001"] == ["149.90", "LA_POSTE", "Lyon", "2026-03-14T09:26:53.589Z", "6A12345678901", "2026-03-16"])
        #expect(args["u-1002"] == ["0.50", "DHL", "Berlin", "2026-03-14T09:26:53.000Z", "42", "-"])
        #expect(args["u-1003"] == ["-3.07", "UPS", "Wien", "2026-03-14T09:00:00.000Z", "-", "-"])
        // Protobuf: int64 exact, the enum's symbol, Timestamp as the proto3 JSON mapping prints it,
        // a oneof member set or not, a proto3 optional set or not.
        #expect(args["u-2001"] == ["149", "CARRIER_LA_POSTE", "Lyon", "2026-03-14T09:26:53.589Z", "6A12345678901", "leave at the door"])
        #expect(args["u-2002"] == ["5", "CARRIER_UPS", "Boston", "2026-03-14T10:00:00Z", "-", "-"])
        #expect(args["u-json"] == ["9.99", "DHL", "Oslo", "2026-03-14T12:00:00Z", "-", "-"])
        let title = emulator.messages.first { $0.topic == "u-1001" }?.message["android"]?["notification"]?["title_loc_args"]
        #expect(title == .array([.string("5b6f7a1e-2c1d-4f8a-9a51-0d3c4b2a1f00")]), "a uuid string")

        // Each schema fetched once, with the credentials (the emulator answers 401 otherwise),
        // and the Protobuf file's import by its subject and version.
        let requests = try await registry.requestLog().filter { $0.method == "GET" }
        #expect(requests.allSatisfy { $0.status == 200 }, "\(requests.map { "\($0.target) \($0.status)" })")
        let byID = requests.filter { $0.target.hasPrefix("/schemas/ids/") }.map(\.target)
        #expect(Set(byID) == Set((avroIDs + protoIDs).map { "/schemas/ids/\($0)" }) && byID.count == Set(byID).count, "\(byID)")
        #expect(requests.contains { $0.target.hasPrefix("/subjects/acme.common.Address/versions/") }, "the Avro reference")
        #expect(requests.contains { $0.target.hasPrefix("/subjects/acme%2Forders%2Fv1%2Fcommon.proto/versions/") }, "the Protobuf import")
        #expect(try await Self.deadLetters(e).isEmpty)
        #expect(try await e.waitUntilCommitted(group: "e2e-schemas"))
        #expect(try worker.metric(#"pushbridge_schema_registry_fetches_total{result="ok"}"#) == 2)
        await expectCleanExit(worker)
        await registry.stop()
        await e.stop()
    }

    @Test(
        "a registry that cannot answer holds the records (retried, nothing dead-lettered, nothing committed past them), then they go out; an unknown ID and bytes that do not decode are dead-lettered with their reasons"
    )
    func outageAndBadRecords() async throws {
        let e = try await EndToEnd(partitions: 1)
        let registry = try await SchemaRegistryServer.start()
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let ids = try await SchemaProducer.produce(
            format: .avro, schema: SchemaProducer.fixture("avro/acme.orders.OrderShipped.avsc"),
            records: SchemaProducer.fixture("records/order-shipped.avro.jsonl"), topic: e.topic, brokers: e.bootstrapServers,
            registry: registry, references: [SchemaProducer.fixture("avro/acme.common.Address.avsc")])
        let id = try #require(ids.first)
        // An outage that lasts until the test ends it: with a fixed number of 503s the worker
        // could get through them all, and send, before a loaded machine ran the checks below.
        try await registry.injectFaults(status: 503, count: 1_000, pathPrefix: "/schemas/ids/")
        try await registry.clearRequests()

        let worker = try await e.startWorker(group: "e2e-schemas-outage", sections: "schema_registry: {url: \"\(registry.url)\"}")
        let emulator = e.emulator
        // Several attempts while it answers 503, the records waiting.
        try #require(
            await eventually(timeout: .seconds(30)) { (try? await registry.requests().count { $0.hasPrefix("GET /schemas/ids/") }) ?? 0 >= 3 })
        #expect(emulator.messages.isEmpty)
        #expect(try await e.committed(group: "e2e-schemas-outage").values.allSatisfy { $0 <= 0 }, "nothing committed past the held records")
        #expect(try worker.metric(#"pushbridge_schema_registry_fetches_total{result="retried"}"#) >= 2)
        try await registry.clearFaults()

        // A record with an ID the registry does not have, and one with the schema's ID whose bytes
        // are not that schema's (a string length past the end).
        let unknown: [UInt8] = [0, 0, 0, 0x7F, 0x7F] + Array("junk".utf8)
        let idBytes: [UInt8] = [0, UInt8(id >> 24 & 0xff), UInt8(id >> 16 & 0xff), UInt8(id >> 8 & 0xff), UInt8(id & 0xff)]
        try await e.events.produce(records: [
            KafkaProducerRecord(topic: e.topic, value: unknown), KafkaProducerRecord(topic: e.topic, value: idBytes + [0x7E, 0x41]),
        ])
        try #require(await eventually(timeout: .seconds(90)) { Self.bodyArgs(emulator).count == 3 }, "\(worker.output.suffix(3000))")
        #expect(try await e.waitUntilCommitted(group: "e2e-schemas-outage"))
        let dead = try await Self.deadLetters(e)
        #expect(dead.count == 2, "\(dead)")
        #expect(dead["unknown_schema"] == "the Schema Registry has no schema with ID 32639")
        #expect(dead["undecodable_record"]?.hasPrefix("the record does not decode with its schema: schema \(id): ") == true, "\(dead)")
        await expectCleanExit(worker)
        await registry.stop()
        await e.stop()
    }

    @Test("replay reads them as a run does: --event-type picks by the record's full name, and a dry run renders them")
    func replay() async throws {
        let e = try await EndToEnd(partitions: 1)
        let registry = try await SchemaRegistryServer.start()
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        _ = try await SchemaProducer.produce(
            format: .avro, schema: SchemaProducer.fixture("avro/acme.orders.OrderShipped.avsc"),
            records: SchemaProducer.fixture("records/order-shipped.avro.jsonl"), topic: e.topic, brokers: e.bootstrapServers,
            registry: registry, references: [SchemaProducer.fixture("avro/acme.common.Address.avsc")])
        _ = try await SchemaProducer.produce(
            format: .protobuf, schema: SchemaProducer.fixture("protobuf/acme/orders/v1/orders.proto"), message: "acme.orders.v1.OrderShipped",
            records: SchemaProducer.fixture("records/order-shipped.protobuf.jsonl"), topic: e.topic, brokers: e.bootstrapServers,
            registry: registry, protoPaths: [SchemaProducer.fixture("protobuf")])
        let config = try e.config(
            group: "prod", httpPort: try FreePort.next(), sections: "schema_registry: {url: \"\(registry.url)\"}")

        let dry = try await e.pushbridge(["replay", "--config", config, "--topic", e.topic, "--from-beginning", "--to-offset", "5", "--dry-run"])
        #expect(dry.status == 0 && dry.output.contains("sent 5 (5 messages)"), "\(dry.output.suffix(2000))")

        let (status, output) = try await e.pushbridge([
            "replay", "--config", config, "--topic", e.topic, "--from-beginning", "--to-offset", "5", "--event-type", "acme.orders.v1.OrderShipped",
        ])
        #expect(status == 0 && output.contains("sent 2 (2 messages)") && output.contains("filtered 3"), "\(output.suffix(2000))")
        #expect(Set(Self.bodyArgs(e.emulator).keys) == ["u-2001", "u-2002"])
        await registry.stop()
        await e.stop()
    }
}
