import Dates
import Foundation
import JSON
import Kafka
import TestSupport
import Testing

/// Quiet hours' `outside: defer` with `pushbridge run` (tansu, the device registry, the timer
/// topic) on a test clock that runs 600 times the real one (`PUSHBRIDGE_TEST_CLOCK`, debug
/// builds): a chat at 00:30Z on Berlin's spring-forward night (01:30 CET) waits in the timer
/// topic until the quiet hours end at 07:30 CEST = 05:30Z, not 06:30Z, and is sent once then.
@Suite("Quiet hours, outside: defer: pushbridge run holds a push until morning (tansu, test clock)", .serialized)
struct QuietHoursDeferEndToEndTests {
    static let mapping = """
        version: 1
        events:
          chat:
            target: {user: {field: /to}}
            body: {key: new_message}
            category: chats
            quiet_hours: {from: "22:00", to: "07:30", outside: defer}
            replace_id: {from: event_id}
        """

    static func at(_ text: String) -> Int64 { RFC3339.parseMilliseconds(text)! }

    @Test("a chat inside Berlin's quiet hours on the spring-forward night is deferred, then sent once at 05:30Z (07:30 CEST) by the worker's clock")
    func defersAcrossSpringForward() async throws {
        let e = try await EndToEnd(partitions: 2)
        try await e.createTopic("devices", partitions: 1)
        try await e.createTopic("e2e-timers", partitions: 16)
        try await e.createTopic("e2e-outcomes", partitions: 1)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        try await TestClockEndToEndTests.registerBea(e)
        try await e.events.produce(records: [
            KafkaProducerRecord(topic: e.topic, key: Array("bea".utf8), value: Array(#"{"type":"chat","id":"c1","to":"bea"}"#.utf8))
        ])
        let store = e.directory.appendingPathComponent("registry.sqlite").path
        // 5 virtual hours are 30 real seconds; levels 0…15 reach them in 5 hops.
        let worker = try await e.startWorker(
            group: "e2e-quiet-defer", sections: "registry: {topic: devices, path: \(store)}\ntimers: {topic: e2e-timers, levels: 16, buckets: 1}",
            outcomes: "e2e-outcomes", environment: ["PUSHBRIDGE_TEST_CLOCK": "virtual=2027-03-28T00:30:00Z,rate=600"])
        #expect(try await e.waitUntilCommitted(group: "e2e-quiet-defer"), "\(worker.output.suffix(2000))")
        let deadline = ContinuousClock.now + .seconds(150)
        while e.acceptedTokens["bea-phone"] == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(200)) }
        let outcomes = try await e.read("e2e-outcomes", count: 2).map { try JSONParser.parse($0.value) }
        #expect(e.acceptedTokens == ["bea-phone": 1], "\(e.acceptedTokens)\n\(worker.output.suffix(3000))")
        #expect(outcomes.map { $0["result"]?.stringValue } == ["deferred", "sent"], "\(outcomes)")
        #expect(outcomes.first?["due"]?.stringValue == "2027-03-28T05:30:00.000Z", "07:30 CEST, the DST-shortened night's end")
        let sentAt = try #require(outcomes.last?["time"]?.stringValue.flatMap(RFC3339.parseMilliseconds))
        #expect(sentAt >= Self.at("2027-03-28T05:30:00Z"), "sent at \(RFC3339.format(milliseconds: sentAt)) by the worker's clock")
        #expect(try worker.metric(#"pushbridge_timers_scheduled_total{event_type="chat",reason="quiet_hours"}"#) == 1)
        #expect(try worker.metric(#"pushbridge_events_total{result="deferred"}"#) == 1)
        await expectCleanExit(worker)
        await e.stop()
    }
}
