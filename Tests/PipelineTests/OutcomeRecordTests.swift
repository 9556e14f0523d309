import Dates
import FCM
import Foundation
import JSON
import Kafka
import Mapping
import Pipeline
import TestSupport
import Testing

/// `topics.outcomes`: one record per push, or per event that sent none, written before the event
/// is done (docs/operations.md, *Outcome records*).
@Suite("Outcome records")
struct OutcomeRecordTests {
    static let mapping = """
        version: 1
        event: {type: /type, id: /id}
        events:
          message.received:
            target: {user: {field: /to}}
            body: {key: new_message}
          order.shipped:
            target: {token: {field: /token}}
            body: {key: order_shipped, args: [{field: /number}]}
        """

    static func processor(_ producer: FakeProducer, outcomes: String? = "outcomes") throws -> EventProcessor {
        var options = EventProcessor.Options(deadLetterTopic: "dead", tokenInvalidationTopic: "invalid")
        options.outcomeTopic = outcomes
        let directory = UserTargetTests.Directory([
            "alice": [
                UserDevice(kind: .token, id: "alice-phone-0001", platform: "android"),
                UserDevice(kind: .fid, id: "dead-alice-tablet", platform: "ios"),
            ]
        ])
        return EventProcessor(
            mappings: try MappingSet.load(files: [("m.yaml", mapping)]), sender: UserTargetTests.Sender(), producer: producer,
            directory: directory, options: options, metrics: PipelineMetrics(), logger: .init(label: "test"))
    }

    static func message(_ json: String, offset: Int64 = 5, headers: [KafkaHeader] = []) -> KafkaMessage {
        KafkaMessage(
            topic: "events", partition: 1, offset: offset, key: nil, value: Array(json.utf8), headers: headers,
            timestamp: KafkaTimestamp(milliseconds: RFC3339.nowMilliseconds() - 1500, kind: .createTime))
    }

    static func records(_ producer: FakeProducer) throws -> [JSONValue] {
        try producer.written.filter { $0.topic == "outcomes" }.map { try JSONParser.parse($0.value) }
    }

    @Test("a user's two devices: one sent with FCM's message name, one invalidated; the user, the redacted device, the attempts and the latency")
    func perPush() async throws {
        let producer = FakeProducer()
        let traceparent = KafkaHeader(name: "traceparent", string: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        let before = RFC3339.nowMilliseconds()
        let outcome = try await Self.processor(producer).process(
            Self.message(#"{"type":"message.received","id":"e-1","to":"alice"}"#, headers: [traceparent]))
        let took = RFC3339.nowMilliseconds() - before
        #expect(outcome.done)
        let records = try Self.records(producer)
        #expect(records.count == 2)
        let sent = try #require(records.first { $0["result"] == .string("sent") })
        #expect(sent["message"] == .string("projects/p/messages/1"))
        #expect(sent["target"] == .object([("id", .string("…one-0001")), ("kind", .string("token"))]))
        #expect(sent["user"] == .string("alice") && sent["event_id"] == .string("e-1") && sent["event_type"] == .string("message.received"))
        #expect(sent["source"] == .string("events/1/5") && sent["attempts"] == .int(1) && sent["project"] == .string("consumer-prod"))
        // From the record's timestamp (1.5 s before it was made) to the answer: however long the
        // processing took on a loaded machine.
        if case .int(let latency)? = sent["latency_ms"] { #expect(latency >= 1500 && latency <= 1500 + took) } else { Issue.record("\(sent)") }
        let dead = try #require(records.first { $0["result"] == .string("invalidated") })
        #expect(dead["fcm_error"] == .string("UNREGISTERED") && dead["target"]?["kind"] == .string("fid"))
        // Keyed by the event ID, and the trace context goes along.
        let written = producer.written.filter { $0.topic == "outcomes" }
        #expect(written.allSatisfy { $0.key == Array("e-1".utf8) && $0.headers.contains(traceparent) })
    }

    @Test("an event that sent nothing has one record: skipped (unknown type) or dead_lettered (a missing field), with its reason")
    func withoutSends() async throws {
        let producer = FakeProducer()
        let p = try Self.processor(producer)
        #expect(await p.process(Self.message(#"{"type":"nobody.cares","id":"e-2"}"#, offset: 6)).done)
        #expect(await p.process(Self.message(#"{"type":"order.shipped","id":"e-3","token":"t"}"#, offset: 7)).done)
        let records = try Self.records(producer)
        #expect(records.map { $0["result"] } == [.string("skipped"), .string("dead_lettered")])
        #expect(records.map { $0["reason_code"] } == [.string("unknown_event_type"), .string("missing_field")])
        #expect(records.allSatisfy { $0["target"] == nil && $0["message"] == nil })
    }

    @Test("a push FCM refuses is failed, with the dead-letter reason; a token of another project too")
    func failed() async throws {
        let producer = FakeProducer()
        #expect(try await Self.processor(producer).process(Self.message(#"{"type":"order.shipped","id":"e-4","token":"other-x","number":"7"}"#)).done)
        let records = try Self.records(producer)
        #expect(records.count == 1)
        #expect(records.first?["result"] == .string("failed") && records.first?["fcm_error"] == .string("SENDER_ID_MISMATCH"))
        #expect(records.first?["reason_code"] == .string("fcm_sender_id_mismatch"))
        #expect(producer.written.contains { $0.topic == "dead" })
    }

    @Test("every kind of record validates against schemas/outcome-record.schema.json")
    func schema() async throws {
        let producer = FakeProducer()
        let p = try Self.processor(producer)
        for (i, json) in [
            #"{"type":"message.received","id":"e-1","to":"alice"}"#, #"{"type":"nobody.cares","id":"e-2"}"#,
            #"{"type":"order.shipped","id":"e-3","token":"t"}"#, #"{"type":"order.shipped","id":"e-4","token":"other-x","number":"7"}"#,
        ].enumerated() {
            #expect(await p.process(Self.message(json, offset: Int64(i))).done)
        }
        let written = producer.written.filter { $0.topic == "outcomes" }
        let results = try Self.records(producer).compactMap { if case .string(let s)? = $0["result"] { s } else { nil } }
        #expect(Set(results) == ["sent", "invalidated", "skipped", "dead_lettered", "failed"])
        let verdicts = try await Self.validate(written)
        #expect(verdicts == Array(repeating: "valid", count: written.count), "\(verdicts)")
    }

    /// Each record checked against schemas/outcome-record.schema.json by Python's jsonschema:
    /// "valid", or "invalid: " and why.
    static func validate(_ records: [KafkaProducerRecord]) async throws -> [String] {
        let folder = try TemporaryFolder()
        var files: [String] = []
        for (i, record) in records.enumerated() {
            files.append(folder.path("o\(i).json"))
            try Data(record.value).write(to: URL(fileURLWithPath: files[i]))
        }
        let script = """
            import json, sys, jsonschema
            schema = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(schema)
            v = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
            for path in sys.argv[2:]:
                errors = list(v.iter_errors(json.load(open(path))))
                print("valid" if not errors else "invalid: " + errors[0].message)
            """
        let (status, output) = try await ChildProcess.run(
            "/usr/bin/env", ["python3", "-c", script, Repository.root + "/schemas/outcome-record.schema.json"] + files)
        #expect(status == 0, "\(output)")
        return output.split(separator: "\n").map(String.init)
    }

    @Test("without topics.outcomes nothing is written for a delivered event")
    func off() async throws {
        let producer = FakeProducer()
        #expect(
            try await Self.processor(producer, outcomes: nil).process(Self.message(#"{"type":"order.shipped","id":"e-5","token":"t","number":"7"}"#))
                .done)
        #expect(producer.written.isEmpty)
    }
}
