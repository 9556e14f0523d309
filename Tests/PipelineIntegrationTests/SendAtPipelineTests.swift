import Dates
import FCM
import Foundation
import JSON
import Kafka
import Logging
import MetricsTestKit
import Pipeline
import Testing

/// `send_at` end to end in one process (docs/timers.md): the event pipeline writes a push due
/// later to the timer topic and commits past it; the timer engine hands it back to the same
/// EventProcessor at its due time, which sends it through the FCM emulator. librdkafka's mock
/// cluster, real producers and consumers, the wall clock.
@Suite("send_at: the pipeline defers, the timer engine sends (mock cluster, FCM emulator)", .serialized)
struct SendAtPipelineTests {
    static let mapping = """
        version: 1
        events:
          reminder:
            target: {token: {field: /token}}
            body: {key: reminder_body}
            send_at: {field: /at}
            max_age: 1h
            ttl: remaining
        """

    @Test("a push due in 10 s: deferred and committed past at once, sent once at its due time, not before; outcome records deferred, then sent")
    func scheduled() async throws {
        let h = try await PipelineHarness(mapping: Self.mapping)
        let layout = TimerLayout(ladder: TimerLadder(levels: 6), buckets: 1)
        try h.cluster.createTopic("timers", partitions: layout.partitionCount)
        try h.cluster.createTopic("outcomes", partitions: 1)
        let backend = TestMetrics()
        let metrics = PipelineMetrics(factory: backend)
        var logger = Logger(label: "send-at-test")
        logger.logLevel = .error
        let client = try h.client()
        var options = EventProcessor.Options(deadLetterTopic: h.deadLetterTopic, tokenInvalidationTopic: h.invalidationTopic)
        options.outcomeTopic = "outcomes"
        options.timers = EventProcessor.TimerOptions(topic: "timers", layout: layout)
        let processor = EventProcessor(
            mappings: h.mappings, sender: FCMProjects(single: client), producer: h.producer, options: options, metrics: metrics, logger: logger)

        var consumer = KafkaConsumerConfiguration(bootstrapServers: [h.cluster.bootstrapServers], groupID: "g-send-at")
        consumer.sessionTimeout = .seconds(6)
        consumer.heartbeatInterval = .milliseconds(500)
        var configuration = Pipeline.Configuration(consumer: consumer, topics: [h.topic])
        configuration.commitInterval = .milliseconds(200)
        let pipeline = RunningPipeline(try Pipeline(configuration: configuration, processor: processor, metrics: metrics, logger: logger))
        consumer.groupID = "g-send-at.timers"
        var timerConfiguration = TimerPipeline.Configuration(consumer: consumer, topic: "timers")
        timerConfiguration.layout = layout
        timerConfiguration.engine.commitInterval = .milliseconds(200)
        timerConfiguration.deadLetterTopic = h.deadLetterTopic
        let timers = RunningTimers(
            try TimerPipeline(configuration: timerConfiguration, producer: h.producer, metrics: metrics, logger: logger) { timer, _ in
                await processor.fire(timer)
            })

        // Both groups joined first: beside other suites a join can take longer than the wait.
        let joinDeadline = ContinuousClock.now + .seconds(120)
        while pipeline.engine.assignment.isEmpty || timers.engine.assignment.isEmpty, ContinuousClock.now < joinDeadline {
            try await Task.sleep(for: .milliseconds(100))
        }
        let due = RFC3339.nowMilliseconds() + 10_000
        try await h.produceRaw([#"{"type":"reminder","id":"r-1","token":"tok-later","at":"\#(RFC3339.format(milliseconds: due))"}"#])
        #expect(try await h.waitUntilCommitted(group: "g-send-at"), "the source is committed past once its timer is written")
        if RFC3339.nowMilliseconds() < due - 1_000 {
            #expect(h.acceptedTokens["tok-later"] == nil, "not sent before its due time")
        }
        let deadline = ContinuousClock.now + .seconds(90)
        while h.acceptedTokens["tok-later"] == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
        let outcomes = try await h.read("outcomes", count: 2)
        try await timers.stop()
        try await pipeline.stop()

        #expect(h.acceptedTokens["tok-later"] == 1, "sent once")
        let records = try outcomes.map { try JSONParser.parse($0.value) }
        #expect(records.map { $0["result"]?.stringValue } == ["deferred", "sent"])
        #expect(records.first?["due"]?.stringValue == RFC3339.format(milliseconds: due))
        // When the emulator received it (its monotonic clock and its start's wall time: within a
        // few milliseconds of the worker's clock), not the outcome record's time, after FCM answered.
        let received = h.emulator.messages.filter { $0.token == "tok-later" }.map { Int64((h.emulator.startedEpochSeconds + $0.time) * 1000) }
        #expect(received.count == 1 && received.allSatisfy { $0 >= due - 10 }, "received \(received.map { $0 - due }) ms after its due time")
        let sources = Set(records.compactMap { $0["source"]?.stringValue })
        #expect(sources.count == 1 && sources.first?.hasPrefix("events/") == true, "both name the source event: \(sources)")
        #expect(try backend.expectCounter("pushbridge_events_total", [("result", "deferred")]).totalValue == 1)
        #expect(try backend.expectCounter("pushbridge_timers_scheduled_total", [("reason", "send_at"), ("event_type", "reminder")]).totalValue == 1)
        await client.shutdown()
        await h.stop()
    }
}
