import FCM
import JSON
import Kafka
import Mapping
import Pipeline
import Testing

/// `pushes:` through ``EventProcessor``: each push's messages go with its own project, a dead
/// device leaves the registry entry of the user of its push, and outcome records name the push.
@Suite("Several pushes per event through the processor")
struct PushesProcessorTests {
    static let mapping = """
        version: 1
        event: {type: /type, id: /id}
        events:
          order.paid:
            pushes:
              - {name: buyer, target: {user: {field: /buyer}}, body: {key: order_paid}}
              - {name: seller, project: driver, target: {user: {field: /seller}}, body: {key: new_sale}}
        """

    @Test("buyer and seller: each push's project; the seller's dead phone leaves the seller's devices, not the buyer's")
    func buyerAndSeller() async throws {
        let directory = UserTargetTests.Directory([
            "ann": [UserDevice(kind: .token, id: "ann-phone")],
            "bob": [UserDevice(kind: .token, id: "bob-phone"), UserDevice(kind: .token, id: "dead-bob-tablet")],
        ])
        let (sender, producer) = (UserTargetTests.Sender(), FakeProducer())
        var options = EventProcessor.Options(deadLetterTopic: "dead", tokenInvalidationTopic: "invalid")
        options.outcomeTopic = "outcomes"
        let p = EventProcessor(
            mappings: try MappingSet.load(files: [("m.yaml", Self.mapping)]), sender: sender, producer: producer, directory: directory,
            options: options, metrics: PipelineMetrics(), logger: .init(label: "test"))
        let outcome = await p.process(
            KafkaMessage(
                topic: "events", partition: 0, offset: 0, key: nil,
                value: Array(#"{"type":"order.paid","id":"e-1","buyer":"ann","seller":"bob"}"#.utf8)))
        #expect(outcome.done && outcome.verdict.sent == 2)
        #expect(Set(sender.sent.withLock { $0 }.map { "\($0.project ?? "-")/\($0.target)" }) == ["-/ann-phone", "driver/bob-phone"])
        #expect(try directory.devices(ofUser: "bob").map(\.id) == ["bob-phone"])
        #expect(try directory.devices(ofUser: "ann").map(\.id) == ["ann-phone"])
        let records = try producer.written.filter { $0.topic == "outcomes" }.map { try JSONParser.parse($0.value ?? []) }
        func text(_ v: JSONValue?) -> String { if case .string(let s)? = v { s } else { "-" } }
        #expect(
            Set(records.map { "\(text($0["push"])) \(text($0["user"])) \(text($0["result"]))" }) == [
                "buyer ann sent", "seller bob sent", "seller bob invalidated",
            ])
    }
}
