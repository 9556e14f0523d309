import Dates
import FCMEmulator
import Foundation
import Kafka
import Mapping
import PipelineTestSupport
import TestSupport
import Testing

/// `max_age` and `ttl: remaining` with `pushbridge run` and `pushbridge replay` as separate
/// processes, a real broker and the emulator (``OldEvents``: which events are too old, and why).
@Suite("Events too old to send: pushbridge run and replay (separate processes, real brokers)", .serialized)
struct MaxAgeEndToEndTests {
    /// An EndToEnd whose mapping file is ``OldEvents/mapping``, with ``OldEvents/batch(now:topic:)``
    /// produced; returns it and the `now` of the batch.
    static func start(_ broker: EndToEnd.Broker, partitions: Int32) async throws -> (EndToEnd, Int64) {
        let e = try await EndToEnd(partitions: partitions, broker: broker)
        try OldEvents.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let now = RFC3339.nowMilliseconds()
        try await e.events.produce(records: OldEvents.batch(now: now, topic: e.topic))
        return (e, now)
    }

    /// Android's ttl in seconds and apns-expiration of the accepted message to `token`.
    static func ttls(_ e: EndToEnd, _ token: String) throws -> (android: Int, apns: Int64) {
        let m = try #require(e.emulator.messages.last { $0.token == token && !$0.validateOnly })
        let ttl = try #require(m.message["android"]?["ttl"]?.stringValue)
        let apns = try #require(m.message["apns"]?["headers"]?["apns-expiration"]?.stringValue.flatMap { Int64($0) })
        return (try #require(ttl.hasSuffix("s") ? Int(ttl.dropLast()) : nil), apns)
    }

    @Test(
        "run (tansu): fresh events sent with ttl: remaining as Android ttl and apns-expiration; old ones dead-lettered or skipped, counted in the metric"
    )
    func run() async throws {
        let (e, now) = try await Self.start(.tansu, partitions: 2)
        let worker = try await e.startWorker(group: "e2e-max-age")
        #expect(try await e.waitUntilCommitted(group: "e2e-max-age"), "\(worker.output.suffix(2000))")

        #expect(e.acceptedTokens == Dictionary(uniqueKeysWithValues: OldEvents.delivered.map { ($0, 1) }), "only the fresh ones, once each")
        // 3 minutes old of 10: both platforms give up 10 minutes after the event, never later.
        let deadline = now / 1000 + 420
        for i in 0..<4 {
            let (android, apns) = try Self.ttls(e, "fresh-arrived-\(i)")
            #expect((300...420).contains(android), "\(android)")
            #expect((deadline - 1...deadline).contains(apns), "\(apns) vs \(deadline)")
        }
        let dead = try await e.events.readAll(e.deadLetterTopic, idle: .seconds(3))
        #expect(
            dead.compactMap { $0.header("pushbridge-reason-code")?.stringValue }.sorted()
                == ["invalid_event_time", "too_old", "too_old", "too_old"])
        #expect(dead.filter { $0.header("pushbridge-event-type")?.stringValue == "driver.arrived" }.count == 3)
        #expect(try worker.metric(#"pushbridge_events_too_old_total{event_type="driver.arrived"}"#) == 3)
        #expect(try worker.metric(#"pushbridge_events_too_old_total{event_type="promo"}"#) == 2, "by the Kafka timestamp")
        #expect(try worker.metric(#"pushbridge_dead_lettered_total{reason="too_old"}"#) == 3)
        #expect(try worker.metric(#"pushbridge_events_total{result="skipped"}"#) == 2)
        await expectCleanExit(worker)
        await e.stop()
    }

    @Test("replay (mock cluster) honours max_age and counts the too old; --ignore-max-age sends them with the whole max_age")
    func replay() async throws {
        let (e, _) = try await Self.start(.mock, partitions: 1)
        let config = try e.config(group: "prod", httpPort: try FreePort.next())
        let range = ["replay", "--config", config, "--topic", e.topic, "--from-beginning", "--to-offset", "12"]

        let (status, output) = try await e.pushbridge(range)
        #expect(status == 0, "\(output.suffix(3000))")
        #expect(output.contains("sent 6 (6 messages) · skipped 0 · filtered 0 · dead-lettered 1 · too old 5"), "\(output.suffix(2000))")
        #expect(e.acceptedTokens == Dictionary(uniqueKeysWithValues: OldEvents.delivered.map { ($0, 1) }))

        let (dry, dryOutput) = try await e.pushbridge(range + ["--dry-run"])
        #expect(dry == 0 && dryOutput.contains("dead-lettered 1 · too old 5"), "\(dryOutput.suffix(2000))")

        let (again, againOutput) = try await e.pushbridge(range + ["--ignore-max-age"])
        #expect(again == 0, "\(againOutput.suffix(3000))")
        #expect(againOutput.contains("max_age ignored") && againOutput.contains("sent 12 (12 messages)"), "\(againOutput.suffix(2000))")
        #expect(e.acceptedTokens["old-arrived-0"] == 1 && e.acceptedTokens["old-promo-1"] == 1 && e.acceptedTokens["timeless-arrived"] == 1)
        #expect(try Self.ttls(e, "old-arrived-0").android == 600, "ignored: the whole max_age, counted from the send")
        await e.stop()
    }
}
