import Kafka
import Mapping
import Pipeline
import Testing

/// The target a mapping renders is the one the FCM client is given: one type from the mapping
/// core to the client, nothing converted between them.
@Suite("Events to FCM: each message's target handed to the sender as rendered")
struct MessageTargetHandOffTests {
    static let mapping = """
        version: 1
        events:
          to.fid:
            target: {fid: {field: /to}}
            body: {key: k}
          to.tokens:
            target: {tokens: {field: /to}}
            body: {key: k}
          to.topic:
            target: {topic: news}
            body: {key: k}
          to.condition:
            target: {condition: "'a' in topics && 'b' in topics"}
            body: {key: k}
        """

    @Test(
        "fid, token (one per listed token), topic and condition reach the sender with their kind and value",
        arguments: [
            (#"{"type":"to.fid","to":"cYz5ANl0QjePd9BlxiXjt8"}"#, [MessageTarget(.fid, "cYz5ANl0QjePd9BlxiXjt8")]),
            (#"{"type":"to.tokens","to":["t-1","t-2"]}"#, [MessageTarget(.token, "t-1"), MessageTarget(.token, "t-2")]),
            (#"{"type":"to.topic"}"#, [MessageTarget(.topic, "news")]),
            (#"{"type":"to.condition"}"#, [MessageTarget(.condition, "'a' in topics && 'b' in topics")]),
        ])
    func handOff(event: String, expected: [MessageTarget]) async throws {
        let sender = FakeSender()
        let processor = EventProcessor(
            mappings: try MappingSet.load(files: [("m.yaml", Self.mapping)]), sender: sender, producer: FakeProducer(),
            options: EventProcessor.Options(deadLetterTopic: "dead", tokenInvalidationTopic: "invalid"), metrics: PipelineMetrics(),
            logger: .init(label: "test"))
        let outcome = await processor.process(KafkaMessage(topic: "events", partition: 0, offset: 0, key: nil, value: Array(event.utf8)))
        #expect(outcome.done && outcome.verdict.sent == expected.count)
        #expect(Set(sender.acceptedTargets) == Set(expected))
    }
}
