import Kafka
import Mapping
import MetricsTestKit
import Testing

@testable import Pipeline

/// An event no variant of its type takes, through ``EventProcessor``: done without a send,
/// skipped or dead-lettered (`no_variant`) as the mapping's `unmatched` says, counted by type.
@Suite("Variants: an event no variant takes")
struct UnmatchedVariantTests {
    static func mapping(_ unmatched: String) -> String {
        """
        version: 1
        events:
          order.status_changed:
            target: {token: {field: /token}}
            variants:
              - name: shipped
                when: {field: /status, equals: shipped}
                body: {key: order_shipped_body}
            unmatched: \(unmatched)
        """
    }

    static func processor(_ unmatched: String, _ sender: FakeSender, _ producer: FakeProducer, _ backend: TestMetrics) throws -> EventProcessor {
        EventProcessor(
            mappings: try MappingSet.load(files: [("m.yaml", mapping(unmatched))]), sender: sender, producer: producer,
            options: EventProcessor.Options(deadLetterTopic: "dead", tokenInvalidationTopic: "invalid"),
            metrics: PipelineMetrics(factory: backend), logger: .init(label: "test"))
    }

    static func event(_ status: String, offset: Int64 = 0) -> KafkaMessage {
        KafkaMessage(
            topic: "events", partition: 0, offset: offset, key: nil,
            value: Array(#"{"type":"order.status_changed","id":"e-\#(offset)","token":"t1","status":"\#(status)"}"#.utf8))
    }

    @Test("unmatched: skip: done (so committed) without a send or a record, counted as skipped and unmatched by type")
    func skip() async throws {
        let (sender, producer, backend) = (FakeSender(), FakeProducer(), TestMetrics())
        let p = try Self.processor("skip", sender, producer, backend)
        let outcome = await p.process(Self.event("cancelled"))
        #expect(outcome.done && outcome.verdict.unmatched)
        #expect(outcome.verdict.disposition == .skipped(reason: "no variant of event type \"order.status_changed\" matches the event"))
        #expect(sender.accepted.isEmpty && producer.written.isEmpty)
        #expect(try backend.expectCounter("pushbridge_events_total", [("result", "skipped")]).totalValue == 1)
        #expect(try backend.expectCounter("pushbridge_events_unmatched_total", [("event_type", "order.status_changed")]).totalValue == 1)

        let shipped = await p.process(Self.event("shipped", offset: 1))
        #expect(shipped.done && !shipped.verdict.unmatched && sender.accepted == ["t1"])
        #expect(
            try backend.expectCounter("pushbridge_events_by_variant_total", [("event_type", "order.status_changed"), ("variant", "shipped")])
                .totalValue == 1)
    }

    @Test("unmatched: dead-letter: a dead-letter record with reason no_variant, the event's type and ID; counted as unmatched")
    func deadLetter() async throws {
        let (sender, producer, backend) = (FakeSender(), FakeProducer(), TestMetrics())
        let p = try Self.processor("dead-letter", sender, producer, backend)
        let outcome = await p.process(Self.event("cancelled", offset: 7))
        #expect(outcome.done && outcome.verdict.unmatched && sender.accepted.isEmpty)
        let record = try #require(producer.written.first)
        #expect(record.topic == "dead")
        #expect(record.headers.first { $0.name == "pushbridge-reason-code" }?.value == Array("no_variant".utf8))
        #expect(record.headers.first { $0.name == "pushbridge-event-type" }?.value == Array("order.status_changed".utf8))
        #expect(try backend.expectCounter("pushbridge_dead_lettered_total", [("reason", "no_variant")]).totalValue == 1)
        #expect(try backend.expectCounter("pushbridge_events_unmatched_total", [("event_type", "order.status_changed")]).totalValue == 1)
    }

    @Test("the verdict: skip or dead-letter as the mapping says, marked unmatched either way")
    func verdict() {
        var none = NoVariant(eventType: "t", eventID: "e", action: .skip)
        let skipped = EventVerdict.mappingFailed(.noVariant(none), skipUnknownTypes: false)
        #expect(skipped.unmatched && skipped.disposition == .skipped(reason: "no variant of event type \"t\" matches the event"))
        none.action = .deadLetter
        let dead = EventVerdict.mappingFailed(.noVariant(none), skipUnknownTypes: true)
        #expect(
            dead.unmatched && dead.disposition == .deadLetter(DeadLetterReason(code: "no_variant", reason: MappingFailure.noVariant(none).reason)))
        #expect(!EventVerdict.mappingFailed(.unknownEventType("x"), skipUnknownTypes: true).unmatched)
    }
}
