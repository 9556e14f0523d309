import FCM
import Foundation
import Kafka
import Logging
import Mapping
import Pipeline
import PipelineTestSupport
import Synchronization
import TestSupport
import Testing

/// Events begun without a task (``EventProcessor/begin(_:then:)``): the pipeline's runner starts
/// an event's send and goes on; the end comes through the sender's callback, and what then needs
/// a task (a retry, an invalidation record) runs in a runner. The real pipeline, reader, runners
/// and commits on an in-memory consumer, with a sender whose answers the test gives
/// (``AnsweringSender``).
@Suite("Pipeline: events begun without a task", .serialized, .timeLimit(.minutes(1)), .onOwnExecutor)
struct BegunEventsTests {

    @Test(
        "begun events end through the sender's callback: acknowledged ones at once, a retry and an invalidation record in a runner; all committed, never more than the slots under way"
    )
    func endsThroughCallbacks() async throws {
        let sender = AnsweringSender(slots: 5)
        let producer = FakeProducer()
        let (pipeline, source) = try sender.pipeline(mapping: WelcomeEvents.mapping, producer: producer, group: "begun", channelCapacity: 8)
        let partition = TopicPartition(topic: "events", partition: 0)
        let tokens = (0..<30).map { i in ["ok-", "retry-", "dead-"][i % 3] + "\(i)" }
        source.append(partition, tokens.map { Array(#"{"type":"user.welcome","id":"\#($0)","name":"N","token":"\#($0)"}"#.utf8) })

        let run = OnOwnExecutor.start { try await pipeline.run() }
        await source.assign([partition])
        // FCM answers whatever is under way, until every event has been begun and answered.
        #expect(
            await eventually {
                sender.answer()
                return sender.begun().count == tokens.count && sender.underWay == 0
            })
        #expect(await eventually { source.committedOffsets[partition] == Int64(tokens.count) }, "every event done and committed")
        pipeline.stop()
        try await run.value

        #expect(sender.sentByTask == 0, "every event was begun, none sent from a task")
        #expect(Set(sender.begun()) == Set(tokens) && sender.begun().count == tokens.count, "each event sent once")
        #expect(sender.mostUnderWay() == 5, "runners waited for room: never more than the slots under way")
        #expect(Set(sender.retried) == Set(tokens.filter { $0.hasPrefix("retry-") }), "each retry ran in a task")
        let invalidated = producer.written.filter { $0.topic == "invalidations" }
        #expect(invalidated.count == 10, "an invalidation record for each dead token")
        #expect(producer.written.allSatisfy { $0.topic == "invalidations" }, "nothing dead-lettered")
    }
}
