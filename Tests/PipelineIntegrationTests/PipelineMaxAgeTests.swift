import Dates
import FCMEmulator
import Foundation
import Kafka
import Mapping
import Pipeline
import PipelineTestSupport
import Testing

/// `max_age` through the whole pipeline in this process: the mock cluster, real producers and
/// consumers, the FCM emulator. The separate-process tests against tansu are in
/// Tests/EndToEndTests/MaxAgeEndToEndTests.swift.
@Suite("Pipeline on the mock cluster: events too old to send", .serialized)
struct PipelineMaxAgeTests {
    @Test(
        "too old by its time field → dead-lettered (too_old); by its Kafka timestamp → skipped; no time → invalid_event_time; fresh ones sent with what is left of max_age"
    )
    func tooOld() async throws {
        let h = try await PipelineHarness(mapping: OldEvents.mapping)
        let now = RFC3339.nowMilliseconds()
        try await h.events.produce(records: OldEvents.batch(now: now, topic: h.topic))
        let client = try h.client()
        let run = RunningPipeline(try h.pipeline(group: "g-max-age", client: client))
        #expect(try await h.waitUntilCommitted(group: "g-max-age"))
        let sentBy = (RFC3339.nowMilliseconds() - now + 999) / 1000  // seconds from producing to the last send, at most
        try await run.stop()

        #expect(h.acceptedTokens == Dictionary(uniqueKeysWithValues: OldEvents.delivered.map { ($0, 1) }), "only the fresh ones, once each")
        let dead = try await h.events.readAll(h.deadLetterTopic, idle: .seconds(3))
        let reasons = dead.map {
            "\($0.header("pushbridge-reason-code")?.stringValue ?? "?") \($0.header("pushbridge-event-id")?.stringValue ?? "-")"
        }
        #expect(reasons.sorted() == ["invalid_event_time -", "too_old old-arrived-0", "too_old old-arrived-1", "too_old old-arrived-2"])
        let old = try #require(dead.first { $0.header("pushbridge-reason-code")?.stringValue == "too_old" })
        #expect(old.header("pushbridge-event-type")?.stringValue == "driver.arrived")
        #expect(old.header("pushbridge-reason")?.stringValue?.hasSuffix("old (from /at), over its max_age of 10m") == true)

        // 3 minutes old of 10: Android's ttl and apns-expiration end 10 minutes after the event,
        // however long the sends took (a loaded machine took minutes).
        for m in h.emulator.messages where (m.token ?? "").hasPrefix("fresh-arrived") {
            let ttl = try #require(m.message["android"]?["ttl"]?.stringValue)
            let seconds = try #require(Int(ttl.dropLast()))
            #expect(ttl.hasSuffix("s") && (420 - Int(sentBy) - 1...420).contains(seconds), "\(ttl), sent within \(sentBy) s")
            let expiration = try #require(m.message["apns"]?["headers"]?["apns-expiration"]?.stringValue.flatMap { Int64($0) })
            #expect((now / 1000 + 420 - 1...now / 1000 + 420).contains(expiration), "\(expiration) vs \(now / 1000 + 420)")
        }
        // The promo has no ttl of its own: FCM's defaults.
        let promo = try #require(h.emulator.messages.first { $0.token == "fresh-promo-0" })
        #expect(promo.message["android"]?["ttl"] == nil && promo.message["apns"]?["headers"]?["apns-expiration"] == nil)
        await client.shutdown()
        await h.stop()
    }
}
