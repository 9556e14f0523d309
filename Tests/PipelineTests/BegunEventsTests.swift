import FCM
import Foundation
import Kafka
import Logging
import Mapping
import Pipeline
import PipelineTestSupport
import Synchronization
import Testing

/// Events begun without a task (``EventProcessor/begin(_:then:)``): the pipeline's runner starts
/// an event's send and goes on; the end comes through the sender's callback, and what then needs
/// a task (a retry, an invalidation record) runs in a runner. The real pipeline, reader, runners
/// and commits on an in-memory consumer, with a sender whose answers the test gives.
@Suite("Pipeline: events begun without a task", .serialized, .timeLimit(.minutes(1)), .onOwnExecutor)
struct BegunEventsTests {
    /// FCM as ``FCMClient/start(_:to:validateOnly:then:)`` is to the pipeline: a begun send ends
    /// when ``answer()`` says so, from the test's own task (as the HTTP/2 client's thread would,
    /// not the runner's); at most `slots` are under way, beyond which `start` refuses as full
    /// until an answer frees a slot. By the token's prefix: `ok-` acknowledged, `retry-` a 503
    /// whose retry (run in a task) is acknowledged, `dead-` UNREGISTERED.
    final class AnsweringSender: PushSending {
        private struct State {
            var pending: [(token: String, then: @Sendable (FCMClient.FirstAttempt) -> Void)] = []
            var begun: [String] = []
            var retried: [String] = []
            var mostUnderWay = 0
            var roomWaiters: [CheckedContinuation<Void, Never>] = []
            var sentByTask = 0
        }

        let slots: Int
        private let state = Mutex(State())

        init(slots: Int) { self.slots = slots }

        var begun: [String] { state.withLock { $0.begun } }
        var retried: [String] { state.withLock { $0.retried } }
        var mostUnderWay: Int { state.withLock { $0.mostUnderWay } }
        var underWay: Int { state.withLock { $0.pending.count } }
        var sentByTask: Int { state.withLock { $0.sentByTask } }

        func projectID(of project: String?) -> String? { project == nil ? "fake" : nil }

        func start(
            _ message: [UInt8], project: String?, to target: SendTarget?, validateOnly: Bool,
            then: @escaping @Sendable (FCMClient.FirstAttempt) -> Void
        ) -> Result<Void, FCMClient.StartRefusal> {
            state.withLock { s in
                guard s.pending.count < slots else { return .failure(.full) }
                let token = target?.value ?? "?"
                s.pending.append((token, then))
                s.begun.append(token)
                s.mostUnderWay = max(s.mostUnderWay, s.pending.count)
                return .success(())
            }
        }

        func waitForRoom(project: String?) async {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let now = state.withLock { s -> Bool in
                    if s.pending.count < slots { return true }
                    s.roomWaiters.append(waiter)
                    return false
                }
                if now { waiter.resume() }
            }
        }

        /// FCM answers every send under way now. Returns how many it answered.
        @discardableResult
        func answer() -> Int {
            let (answered, waiters) = state.withLock { s in
                defer {
                    s.pending = []
                    s.roomWaiters = []
                }
                return (s.pending, s.roomWaiters)
            }
            for (token, then) in answered {
                then(self.firstAttempt(token))
            }
            for waiter in waiters { waiter.resume() }
            return answered.count
        }

        private func firstAttempt(_ token: String) -> FCMClient.FirstAttempt {
            if token.hasPrefix("dead-") {
                let error = FCMError(code: .unregistered, kind: .tokenDead, httpStatus: 404, message: "Requested entity was not found.")
                return .finished(FCMClient.SendResult(outcome: .failure(error), attempts: 1))
            }
            if token.hasPrefix("retry-") {
                return .unfinished { [self] in
                    state.withLock { $0.retried.append(token) }
                    return FCMClient.SendResult(outcome: .success("projects/fake/messages/\(token)"), attempts: 2)
                }
            }
            return .finished(FCMClient.SendResult(outcome: .success("projects/fake/messages/\(token)"), attempts: 1))
        }

        /// Only for events that cannot be begun: none here.
        func send(_ message: [UInt8], project: String?, to target: SendTarget?, validateOnly: Bool) async -> FCMClient.SendResult {
            state.withLock { $0.sentByTask += 1 }
            return FCMClient.SendResult(outcome: .success("projects/fake/messages/x"), attempts: 1)
        }

        var concurrencyLimit: Int { slots }

        func setProjectShare(_ project: String, sendsPerSecond: Double?) {}
    }

    static let topic = "events"

    @Test(
        "begun events end through the sender's callback: acknowledged ones at once, a retry and an invalidation record in a runner; all committed, never more than the slots under way"
    )
    func endsThroughCallbacks() async throws {
        var logger = Logger(label: "begun")
        logger.logLevel = .critical
        let sender = AnsweringSender(slots: 5)
        let producer = FakeProducer()
        let processor = EventProcessor(
            mappings: try MappingSet.load(files: [("test.yaml", WelcomeEvents.mapping)]), sender: sender, producer: producer,
            options: EventProcessor.Options(deadLetterTopic: "dead-letter", tokenInvalidationTopic: "invalidations"),
            metrics: PipelineMetrics(), logger: logger)
        var configuration = Pipeline.Configuration(
            consumer: KafkaConsumerConfiguration(bootstrapServers: ["unused:9092"], groupID: "begun"), topics: [Self.topic])
        configuration.commitInterval = .milliseconds(20)
        var made: FakeMessageSource?
        let pipeline = try Pipeline(configuration: configuration, processor: processor, metrics: PipelineMetrics(), logger: logger) { handler in
            let source = FakeMessageSource(handler: handler, channelCapacity: 8)
            made = source
            return source
        }
        let source = try #require(made)
        let partition = TopicPartition(topic: Self.topic, partition: 0)
        let tokens = (0..<30).map { i in ["ok-", "retry-", "dead-"][i % 3] + "\(i)" }
        source.append(partition, tokens.map { Array(#"{"type":"user.welcome","id":"\#($0)","name":"N","token":"\#($0)"}"#.utf8) })

        let run = OnOwnExecutor.start { try await pipeline.run() }
        await source.assign([partition])
        // FCM answers whatever is under way, until every event has been begun and answered.
        #expect(
            await eventually {
                sender.answer()
                return sender.begun.count == tokens.count && sender.underWay == 0
            })
        #expect(await eventually { source.committedOffsets[partition] == Int64(tokens.count) }, "every event done and committed")
        pipeline.stop()
        try await run.value

        #expect(sender.sentByTask == 0, "every event was begun, none sent from a task")
        #expect(Set(sender.begun) == Set(tokens) && sender.begun.count == tokens.count, "each event sent once")
        #expect(sender.mostUnderWay == 5, "runners waited for room: never more than the slots under way")
        #expect(Set(sender.retried) == Set(tokens.filter { $0.hasPrefix("retry-") }), "each retry ran in a task")
        let invalidated = producer.written.filter { $0.topic == "invalidations" }
        #expect(invalidated.count == 10, "an invalidation record for each dead token")
        #expect(producer.written.allSatisfy { $0.topic == "invalidations" }, "nothing dead-lettered")
    }
}
