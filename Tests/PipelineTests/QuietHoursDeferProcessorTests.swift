import Dates
import Foundation
import Kafka
import Mapping
import MetricsTestKit
import Pipeline
import Preferences
import TestSupport
import Testing

/// Quiet hours' `outside: defer` through ``EventProcessor`` (docs/timers.md): an event inside the
/// user's quiet hours becomes a timer record (reason `quiet_hours`, keyed by the user, due at the
/// window's end); fired while the hours still hold (the user moved them), it is deferred again
/// with its count raised, and after three such re-defers it is sent inside them.
@Suite("Quiet hours, outside: defer, in the processor: timer records and re-defers")
struct QuietHoursDeferProcessorTests {
    static let mapping = """
        version: 1
        events:
          chat:
            target: {user: {field: /to}}
            quiet_hours: {from: "\(localClock(minutesFromNow: -120))", to: "\(localClock(minutesFromNow: 120))", outside: defer}
            body: {key: new_message}
        """
    static let directory = UserRulesProcessorTests.Directory([
        "ana": UserRecord(devices: [UserDevice(kind: .token, id: "ana-phone-000001")], preferences: UserPreferences())
    ])
    static let layout = TimerLayout(ladder: TimerLadder(levels: 18), buckets: 2)

    func processor(_ sender: FakeSender, _ producer: FakeProducer, _ backend: TestMetrics) throws -> EventProcessor {
        var options = EventProcessor.Options(deadLetterTopic: "dead", tokenInvalidationTopic: "invalid")
        options.timers = EventProcessor.TimerOptions(topic: "timers", layout: Self.layout)
        return EventProcessor(
            mappings: try MappingSet.load(files: [("m.yaml", Self.mapping)]), sender: sender, producer: producer, directory: Self.directory,
            options: options, metrics: PipelineMetrics(factory: backend), logger: .init(label: "test"))
    }

    static let event = KafkaMessage(topic: "events", partition: 1, offset: 42, key: nil, value: Array(#"{"type":"chat","to":"ana"}"#.utf8))

    /// The timer records written so far.
    func timers(_ producer: FakeProducer) throws -> [TimerRecord] {
        try producer.written.filter { $0.topic == "timers" }.map { record in
            try TimerRecord(
                parsing: KafkaMessage(
                    topic: "timers", partition: record.partition ?? 0, offset: 0, key: record.key, value: record.value, headers: record.headers))
        }
    }

    @Test("inside the quiet hours: a quiet_hours timer for the user, due when they end, and the event done without a send")
    func deferred() async throws {
        let (sender, producer, backend) = (FakeSender(), FakeProducer(), TestMetrics())
        let outcome = await (try processor(sender, producer, backend)).process(Self.event)
        #expect(outcome.done && sender.accepted.isEmpty)
        guard case .deferred(let due) = outcome.verdict.disposition else {
            Issue.record("expected deferred, got \(outcome.verdict.disposition)")
            return
        }
        let timer = try #require(try timers(producer).first)
        #expect(timer.reason == .quietHours && timer.key == Array("ana".utf8) && timer.due == due && timer.redefers == 0)
        #expect(due > RFC3339.nowMilliseconds() + 100 * 60_000, "about two hours ahead: \(due - RFC3339.nowMilliseconds()) ms")
        let record = try #require(producer.written.first { $0.topic == "timers" })
        #expect(
            record.partition.map { Self.layout.partitions(key: Array("ana".utf8)).contains($0) } == true, "a level partition of the user's bucket")
        #expect(try backend.expectCounter("pushbridge_timers_scheduled_total", [("reason", "quiet_hours"), ("event_type", "chat")]).totalValue == 1)
    }

    @Test("fired while still quiet: deferred again with redefers + 1; the fourth time it is sent inside them")
    func redefers() async throws {
        let (sender, producer, backend) = (FakeSender(), FakeProducer(), TestMetrics())
        let processor = try processor(sender, producer, backend)
        _ = await processor.process(Self.event)
        var timer = try #require(try timers(producer).last)
        for expected in 1...3 {
            #expect(await processor.fire(timer))
            let next = try #require(try timers(producer).last)
            #expect(next.redefers == expected && next.id == timer.id && next.source == timer.source, "re-defer \(expected)")
            #expect(sender.accepted.isEmpty)
            timer = next
        }
        #expect(await processor.fire(timer))
        #expect(try timers(producer).count == 4, "no fifth timer")
        #expect(sender.accepted == ["ana-phone-000001"], "sent inside the quiet hours after three re-defers")
    }
}
