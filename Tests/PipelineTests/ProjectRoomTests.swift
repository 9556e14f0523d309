import FCM
import Foundation
import Kafka
import Logging
import Mapping
import Pipeline
import Synchronization
import TestSupport
import Testing

/// Several projects in one worker: an event whose project has every send slot taken is set
/// aside until that project has room, so the runners go on to other projects' events. The real
/// pipeline, reader, runners and commits on an in-memory consumer, with a sender whose answers
/// the test gives, per project (``AnsweringSender``).
@Suite("Pipeline: a project without room holds up no other project", .serialized, .timeLimit(.minutes(1)), .onOwnExecutor)
struct ProjectRoomTests {
    static let mapping = """
        version: 1
        events:
          user.welcome:
            project: {field: /app, default: consumer}
            target: {token: {field: /token}}
            title: {key: welcome_title, args: [{field: /name}]}
        """

    static func event(_ token: String, app: String) -> [UInt8] {
        Array(#"{"type":"user.welcome","name":"N","token":"\#(token)","app":"\#(app)"}"#.utf8)
    }

    @Test(
        "with the driver app's two slots taken and 30 of its events waiting, the consumer app's events queued behind them are all sent and acknowledged; the driver app's go as it answers, never more than its slots under way; all committed once"
    )
    func otherProjectGoesOn() async throws {
        // More driver events than the pipeline's beginning runners (16), so that runners waiting
        // in place for the driver app's room would leave none for the consumer app's events.
        let sender = AnsweringSender(slots: ["consumer": 100, "driver": 2])
        let (pipeline, source) = try sender.pipeline(mapping: Self.mapping, group: "project-room", channelCapacity: 64)
        let partitions = [TopicPartition(topic: "events", partition: 0), TopicPartition(topic: "events", partition: 1)]
        let drivers = (0..<30).map { "driver-\($0)" }
        let consumers = (0..<10).map { "consumer-\($0)" }
        source.append(partitions[0], drivers.map { Self.event($0, app: "driver") } + consumers.prefix(5).map { Self.event($0, app: "consumer") })
        source.append(partitions[1], consumers.suffix(5).map { Self.event($0, app: "consumer") })

        let run = OnOwnExecutor.start { try await pipeline.run() }
        await source.assign(partitions)
        #expect(
            await eventually {
                sender.answer("consumer")
                return Set(sender.begun("consumer")) == Set(consumers)
            }, "the consumer app's events were sent while the driver app had no room: \(sender.begun("consumer"))")
        #expect(sender.begun("driver").count == 2, "the driver app's slots stayed taken meanwhile")
        #expect(
            await eventually { source.committedOffsets[partitions[1]] == 5 }, "the consumer app's partition committed, the driver app's still waiting"
        )
        #expect(source.committedOffsets[partitions[0]] ?? 0 == 0, "nothing past the driver app's unanswered events committed")

        // The driver app answers: its events set aside go, two at a time.
        #expect(
            await eventually {
                sender.answer("driver")
                return sender.begun("driver").count == drivers.count
            })
        #expect(await eventually { sender.answer("driver") == 0 && source.committedOffsets[partitions[0]] == 35 }, "every event done and committed")
        pipeline.stop()
        try await run.value

        #expect(sender.begun("driver").sorted() == drivers.sorted(), "each driver event sent once")
        #expect(sender.begun("consumer").count == consumers.count, "each consumer event sent once")
        #expect(sender.mostUnderWay("driver") == 2, "never more than the driver app's slots under way")
        #expect(sender.sentByTask == 0, "every event was begun, none sent from a task")
    }
}
