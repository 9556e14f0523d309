import Dates
import FCMEmulator
import Foundation
import Jobs
import Kafka
import PipelineTestSupport
import TestSupport
import Testing

/// `pushbridge run` on an injected wall clock (`PUSHBRIDGE_TEST_CLOCK`, debug builds only;
/// docs/testing.md): quiet hours and `max_age` are judged at the worker's virtual time, not the
/// machine's. The night is Berlin's spring-forward one (2027-03-28, 02:00 CET → 03:00 CEST).
@Suite("A worker on a test clock (pushbridge run, tansu)", .serialized)
struct TestClockEndToEndTests {
    /// ``OldEvents/mapping`` (`driver.arrived`: `max_age: 10m` from its `at`, `ttl: remaining`)
    /// and a chat to a user with quiet hours 22:00–07:30 in the user's zone.
    static let mapping =
        OldEvents.mapping + """

              chat:
                target: {user: {field: /to}}
                quiet_hours: {from: "22:00", to: "07:30"}
                body: {key: new_message}
            """

    static func at(_ text: String) -> Int64 { RFC3339.parseMilliseconds(text)! }

    /// The chat to Berlin's `bea`, two arrivals (5 and 20 minutes before 00:30Z).
    static func start() async throws -> EndToEnd {
        let e = try await EndToEnd(partitions: 2)
        try await e.createTopic("devices", partitions: 1)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        try await registerBea(e)
        let night = at("2027-03-28T00:30:00Z")
        try await e.events.produce(records: [
            KafkaProducerRecord(topic: e.topic, key: Array("bea".utf8), value: Array(#"{"type":"chat","id":"c1","to":"bea"}"#.utf8)),
            OldEvents.arrived("fresh-arrival", secondsAgo: 300, now: night, topic: e.topic),
            OldEvents.arrived("old-arrival", secondsAgo: 1200, now: night, topic: e.topic),
        ])
        return e
    }

    /// Berlin's `bea`, one phone (`bea-phone`), in the registry topic `devices`.
    static func registerBea(_ e: EndToEnd) async throws {
        let backend = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: [e.bootstrapServers]))
        let bea = #"{"devices": [{"token": "bea-phone"}], "time_zone": "Europe/Berlin"}"#
        _ = try await backend.send(KafkaProducerRecord(topic: "devices", key: Array("bea".utf8), value: Array(bea.utf8)))
        await backend.close()
    }

    func worker(_ e: EndToEnd, group: String, clock: String) async throws -> WorkerProcess {
        let store = e.directory.appendingPathComponent("\(group).sqlite").path
        return try await e.startWorker(
            group: group, sections: "registry: {topic: devices, path: \(store)}", environment: ["PUSHBRIDGE_TEST_CLOCK": clock])
    }

    @Test(
        "at 00:30Z (01:30 CET) Berlin's quiet hours withhold the chat, max_age and apns-expiration count from 00:30Z; at 05:45Z (07:45 CEST, after the window's DST-shortened end) the chat is sent and both arrivals are too old"
    )
    func quietHoursAndMaxAgeAtInjectedTime() async throws {
        let e = try await Self.start()
        let night = try await worker(e, group: "e2e-clock-night", clock: "virtual=2027-03-28T00:30:00Z")
        #expect(try await e.waitUntilCommitted(group: "e2e-clock-night"), "\(night.output.suffix(2000))")
        #expect(night.output.contains("running on a test clock"), "\(night.output.suffix(2000))")
        #expect(e.acceptedTokens == ["fresh-arrival": 1], "\(e.acceptedTokens)")
        #expect(try night.metric(#"pushbridge_pushes_withheld_total{rule="quiet_hours",event_type="chat"}"#) == 1)
        #expect(try night.metric(#"pushbridge_events_too_old_total{event_type="driver.arrived"}"#) == 1, "old-arrival: 20 min of 10")
        // 5 minutes old of 10 at the virtual 00:30Z: both platforms give up at 00:35Z.
        let sent = try #require(e.emulator.messages.last { $0.token == "fresh-arrival" && !$0.validateOnly })
        let ttl = try #require(sent.message["android"]?["ttl"]?.stringValue)
        let apns = try #require(sent.message["apns"]?["headers"]?["apns-expiration"]?.stringValue.flatMap { Int64($0) })
        let deadline = Self.at("2027-03-28T00:35:00Z") / 1000
        #expect((deadline - 2...deadline).contains(apns), "\(apns) vs \(deadline)")
        // The virtual clock runs from the worker's start: the send is a few seconds past 00:30Z.
        let seconds = try #require(ttl.hasSuffix("s") ? Int(ttl.dropLast()) : nil)
        #expect((240...300).contains(seconds), "\(ttl)")
        await expectCleanExit(night)

        // 07:45 CEST: past 07:30 only because the clocks went forward (07:45 CET would be quiet).
        let morning = try await worker(e, group: "e2e-clock-morning", clock: "virtual=2027-03-28T05:45:00Z")
        #expect(try await e.waitUntilCommitted(group: "e2e-clock-morning"), "\(morning.output.suffix(2000))")
        #expect(e.acceptedTokens == ["fresh-arrival": 1, "bea-phone": 1], "\(e.acceptedTokens)")
        #expect(try morning.metric(#"pushbridge_events_too_old_total{event_type="driver.arrived"}"#) == 2)
        await expectCleanExit(morning)
        await e.stop()
    }

    @Test("a broker that is not loopback, or a malformed value, refuses to start (exit 2) with the reason")
    func refusals() async throws {
        let e = try await EndToEnd(partitions: 1, broker: .mock)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let config = try e.config(group: "e2e-clock-refused", httpPort: try FreePort.next())
        let remote = try await e.pushbridge(
            ["run", "--config", config],
            environment: ["PUSHBRIDGE_TEST_CLOCK": "virtual=2027-03-28T00:30:00Z", "PUSHBRIDGE_KAFKA_BROKERS": "kafka.example.com:9092"])
        #expect(remote.status == 2, "\(remote.output.suffix(2000))")
        #expect(remote.output.contains("kafka.example.com:9092 is not"), "\(remote.output.suffix(2000))")
        let malformed = try await e.pushbridge(["run", "--config", config], environment: ["PUSHBRIDGE_TEST_CLOCK": "virtual=tomorrow"])
        #expect(malformed.status == 2, "\(malformed.output.suffix(2000))")
        #expect(malformed.output.contains("virtual must be an RFC 3339 instant"), "\(malformed.output.suffix(2000))")
        await e.stop()
    }

    @Test("loopback brokers: 127.0.0.0/8, localhost, ::1, with or without a scheme; names are not resolved")
    func loopback() {
        for broker in ["127.0.0.1:9092", "127.1.2.3:1", "localhost:9092", "LOCALHOST", "[::1]:9092", "PLAINTEXT://127.0.0.1:9092", "::1"] {
            #expect(WorkerClock.isLoopback(broker: broker), "\(broker)")
        }
        for broker in ["10.0.0.1:9092", "kafka:9092", "127.0.0.1.example.com:9092", "128.0.0.1:9092", "[::2]:9092", "127.0.0:9092", "[::1"] {
            #expect(!WorkerClock.isLoopback(broker: broker), "\(broker)")
        }
        #expect(throws: Never.self) { _ = try WorkerClock.choose(environment: [:], brokers: ["kafka.example.com:9092"]) }
    }
}
