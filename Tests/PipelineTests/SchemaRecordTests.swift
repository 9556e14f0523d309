import FCM
import Kafka
import Mapping
import Pipeline
import Synchronization
import Testing

/// Schema Registry records through ``EventProcessor``: the writer schema asked of a
/// ``SchemaSource`` by the ID in the record's frame, the topic's `kafka.value_formats` obeyed, the
/// record held (never dead-lettered) while the registry cannot answer, and the registry's "no
/// such schema" a dead-letter record with its reason.
///
/// These records are JSON Schema's (magic byte, ID, JSON), so the plumbing is tested here
/// without Avro or Protobuf; RecordDecodingTests test those decoders, and the end-to-end suite all of it.
@Suite("Schema Registry records: the processor with a schema source")
struct SchemaRecordTests {
    /// The registry as ``SchemaSource`` documents it: known IDs answered, unknown ones
    /// `notFound`; while ``down`` is set, a lookup waits (the client's retries) until it is cleared
    /// or the task is cancelled.
    final class Source: SchemaSource {
        private struct State {
            var down = false
            var asked: [UInt32] = []
            var waiting: [CheckedContinuation<Void, Never>] = []
        }

        private let state = Mutex(State())
        let schemas: [UInt32: WriterSchema]

        init(_ schemas: [UInt32: WriterSchema]) { self.schemas = schemas }

        var asked: [UInt32] { state.withLock { $0.asked } }
        func goDown() { state.withLock { $0.down = true } }
        func comeBack() {
            let waiting = state.withLock { s in
                s.down = false
                defer { s.waiting = [] }
                return s.waiting
            }
            for w in waiting { w.resume() }
        }

        func schema(id: UInt32) async throws(SchemaLookupError) -> WriterSchema {
            state.withLock { $0.asked.append(id) }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    let go = state.withLock { s -> Bool in
                        guard s.down, !Task.isCancelled else { return true }
                        s.waiting.append(c)
                        return false
                    }
                    if go { c.resume() }
                }
            } onCancel: {
                comeBack()
            }
            if Task.isCancelled { throw .cancelled }
            guard let schema = schemas[id] else { throw .notFound(id: id) }
            return schema
        }
    }

    static let mapping = """
        version: 1
        events:
          order.shipped:
            target: {token: {field: /token}}
            body: {key: order_shipped, args: [{field: /order}]}
        """

    static func processor(
        _ source: Source?, _ sender: FakeSender, _ producer: FakeProducer, formats: [String: ValueFormat] = [:]
    ) throws
        -> EventProcessor
    {
        var options = EventProcessor.Options(deadLetterTopic: "dead", tokenInvalidationTopic: "invalid")
        options.valueFormats = formats
        return EventProcessor(
            mappings: try MappingSet.load(files: [("m.yaml", mapping)]), sender: sender, producer: producer, schemas: source,
            options: options, metrics: PipelineMetrics(), logger: .init(label: "test"))
    }

    /// Confluent's frame around a JSON document: magic byte 0, the ID big-endian, the JSON.
    static func framed(id: UInt32, _ json: String, topic: String = "orders", offset: Int64 = 0) -> KafkaMessage {
        framed(id: id, body: Array(json.utf8), topic: topic, offset: offset)
    }

    static func framed(id: UInt32, body: [UInt8], topic: String = "orders", offset: Int64 = 0) -> KafkaMessage {
        let header: [UInt8] = [0, UInt8(id >> 24), UInt8(id >> 16 & 0xff), UInt8(id >> 8 & 0xff), UInt8(id & 0xff)]
        return KafkaMessage(topic: topic, partition: 0, offset: offset, key: nil, value: header + body)
    }

    static let shipped = #"{"type":"order.shipped","token":"t1","order":"A-17"}"#

    static func reasonCode(_ producer: FakeProducer) -> String? { deadLetterHeader(producer, "pushbridge-reason-code") }

    static func deadLetterHeader(_ producer: FakeProducer, _ name: String) -> String? {
        producer.written.first { $0.topic == "dead" }?.headers.first { $0.name == name }?.value.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test("a framed record is decoded with the schema its ID names; plain JSON on the same topic never asks the registry")
    func decodesByID() async throws {
        let (source, sender, producer) = (Source([7: .json]), FakeSender(), FakeProducer())
        let p = try Self.processor(source, sender, producer)
        let framed = await p.process(Self.framed(id: 7, Self.shipped))
        #expect(framed.done && framed.verdict.sent == 1 && sender.accepted == ["t1"])
        let plain = await p.process(KafkaMessage(topic: "orders", partition: 0, offset: 1, key: nil, value: Array(Self.shipped.utf8)))
        #expect(plain.done && plain.verdict.sent == 1)
        #expect(source.asked == [7])
    }

    @Test("the registry's no-such-schema dead-letters the record as unknown_schema; a broken frame as undecodable_record")
    func permanentFailures() async throws {
        let (source, sender, producer) = (Source([:]), FakeSender(), FakeProducer())
        let p = try Self.processor(source, sender, producer)
        let unknown = await p.process(Self.framed(id: 99, Self.shipped))
        #expect(unknown.done && sender.started == 0 && Self.reasonCode(producer) == "unknown_schema")

        let producer2 = FakeProducer()
        let short = try Self.processor(Source([7: .json]), sender, producer2)
        let cut = await short.process(KafkaMessage(topic: "orders", partition: 0, offset: 2, key: nil, value: [0, 0, 7]))
        #expect(cut.done && Self.reasonCode(producer2) == "undecodable_record")
    }

    @Test("while the registry cannot answer, the record waits, unfinished and not dead-lettered; it goes out when the registry is back")
    func heldWhileDown() async throws {
        let (source, sender, producer) = (Source([7: .json]), FakeSender(), FakeProducer())
        source.goDown()
        let p = try Self.processor(source, sender, producer)
        let task = Task { await p.process(Self.framed(id: 7, Self.shipped)) }
        try await Task.sleep(for: .milliseconds(200))
        #expect(sender.started == 0 && producer.written.isEmpty)
        source.comeBack()
        let outcome = await task.value
        #expect(outcome.done && outcome.verdict.sent == 1 && producer.written.isEmpty)
    }

    @Test("a worker stopping while the registry is down leaves the record unfinished: not done, nothing written")
    func stoppingWhileDown() async throws {
        let (source, sender, producer) = (Source([7: .json]), FakeSender(), FakeProducer())
        source.goDown()
        let p = try Self.processor(source, sender, producer)
        let task = Task { await p.process(Self.framed(id: 7, Self.shipped)) }
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        let outcome = await task.value
        #expect(!outcome.done && outcome.verdict.disposition == .abandoned && producer.written.isEmpty && sender.started == 0)
    }

    @Test("kafka.value_formats: avro refuses JSON and a JSON Schema record; json reads a framed record as JSON (and fails); no registry, no schema")
    func valueFormats() async throws {
        let sender = FakeSender()
        let avro = FakeProducer()
        let p = try Self.processor(Source([7: .json]), sender, avro, formats: ["orders": .avro])
        let plain = await p.process(KafkaMessage(topic: "orders", partition: 0, offset: 0, key: nil, value: Array(Self.shipped.utf8)))
        #expect(plain.done && Self.reasonCode(avro) == "wrong_value_format")
        let jsonSchema = FakeProducer()
        let q = try Self.processor(Source([7: .json]), sender, jsonSchema, formats: ["orders": .avro])
        _ = await q.process(Self.framed(id: 7, Self.shipped))
        #expect(Self.reasonCode(jsonSchema) == "wrong_value_format")
        // Another topic is auto.
        let other = await q.process(Self.framed(id: 7, Self.shipped, topic: "other"))
        #expect(other.done && other.verdict.sent == 1)

        let asJSON = FakeProducer()
        let source = Source([7: .json])
        let r = try Self.processor(source, sender, asJSON, formats: ["orders": .json])
        _ = await r.process(Self.framed(id: 7, Self.shipped))
        #expect(Self.reasonCode(asJSON) == "invalid_json" && source.asked.isEmpty)

        let none = FakeProducer()
        let s = try Self.processor(nil, sender, none)
        _ = await s.process(Self.framed(id: 7, Self.shipped))
        #expect(Self.reasonCode(none) == "wrong_value_format")
        let reason = none.written.first?.headers.first { $0.name == "pushbridge-reason" }?.value.map { String(decoding: $0, as: UTF8.self) }
        #expect(reason?.contains("no schema_registry.url is configured") == true, "\(reason ?? "")")
    }

    @Test("schema records are typed by their record name unless event.type is set; JSON Schema's have none, so /type")
    func typedByPointerWithoutName() async throws {
        let (source, sender, producer) = (Source([7: .json]), FakeSender(), FakeProducer())
        let p = try Self.processor(source, sender, producer)
        let untyped = await p.process(Self.framed(id: 7, #"{"token":"t1","order":"A-17"}"#))
        #expect(untyped.done && Self.reasonCode(producer) == "missing_event_type")
    }

    /// Decoding comes before the type's lookup, and checks the strings no mapping reads (`note`)
    /// as it checks those one does (`order`): otherwise, under `unknown_event_types: skip`, a
    /// broken record of a type no mapping names would be skipped silently.
    @Test("a record of a type no mapping names that does not decode is undecodable_record, not skipped as unknown_event_type (Avro, Protobuf)")
    func undecodableBeforeUnknownType() async throws {
        let avro = try AvroSchema(
            parsing:
                #"{"type":"record","name":"Viewed","namespace":"acme.audit","fields":[{"name":"order","type":"string"},{"name":"note","type":"string"}]}"#
        )
        let proto = try ProtobufSchema(schema: #"syntax = "proto3"; package acme.audit; message Viewed { string order = 1; string note = 2; }"#)
        let source = Source([8: .avro(avro), 9: .protobuf(proto)])
        // order "A-17" and note "ok": Avro's zigzag lengths; Protobuf's message-index count 0, tags and lengths.
        let bodies: [(id: UInt32, order: [UInt8], note: [UInt8])] = [
            (8, [0x08] + Array("A-17".utf8), [0x04] + Array("ok".utf8)),
            (9, [0x00, 0x0a, 0x04] + Array("A-17".utf8), [0x12, 0x02] + Array("ok".utf8)),
        ]
        for (id, order, note) in bodies {
            for broken in [nil, "order", "note"] {
                var (o, n) = (order, note)
                if broken == "order" { o[o.count - 1] = 0xff }
                if broken == "note" { n[n.count - 1] = 0xff }
                let (sender, producer) = (FakeSender(), FakeProducer())
                let outcome = try await Self.processor(source, sender, producer).process(Self.framed(id: id, body: o + n))
                #expect(outcome.done && sender.started == 0)
                guard let broken else {
                    #expect(outcome.verdict.disposition == .skipped(reason: #"no mapping for event type "acme.audit.Viewed""#), "\(id)")
                    #expect(producer.written.isEmpty)
                    continue
                }
                #expect(Self.reasonCode(producer) == "undecodable_record", "schema \(id), \(broken)")
                let reason = Self.deadLetterHeader(producer, "pushbridge-reason") ?? ""
                #expect(reason.contains("/\(broken)") && reason.contains("not valid UTF-8"), "\(reason)")
            }
        }
    }
}
