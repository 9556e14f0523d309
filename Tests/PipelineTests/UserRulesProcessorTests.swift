import Dates
import Foundation
import JSON
import Kafka
import Mapping
import MetricsTestKit
import Pipeline
import Preferences
import Synchronization
import TestSupport
import Testing

/// The per-user rules through ``EventProcessor`` (docs/rules.md): a withheld push is done without
/// a send, has an outcome record `withheld` naming its rule, and is counted by rule and event
/// type; a device that muted the category is left out while the others get the push.
@Suite("Per-user rules in the processor: verdicts, outcome records, metrics")
struct UserRulesProcessorTests {
    /// The registry's view with preferences, as ``DeviceDirectory/record(ofUser:)`` documents it.
    final class Directory: DeviceDirectory {
        let records: [String: UserRecord]
        init(_ records: [String: UserRecord]) { self.records = records }
        func devices(ofUser user: String) throws -> [UserDevice] { records[user]?.devices ?? [] }
        func record(ofUser user: String) throws -> UserRecord { records[user] ?? UserRecord(devices: []) }
        func drop(_ device: String, ofUser user: String) {}
        func dropPushToStart(_ token: String, ofUser user: String) {}
    }

    /// Quiet hours from two hours before now to two hours after, in UTC (the users' zone here).
    static let aroundNow = "{from: \"\(localClock(minutesFromNow: -120))\", to: \"\(localClock(minutesFromNow: 120))\"}"

    static let mapping = """
        version: 1
        event: {id: /id}
        events:
          chat:
            target: {user: {field: /to}}
            category: social
            body: {key: new_message}
          login:
            target: {user: {field: /to}}
            category: security
            critical: true
            body: {key: new_login}
          digest:
            target: {user: {field: /to}}
            quiet_hours: \(aroundNow)
            body: {key: digest}
        """

    static func processor(_ directory: Directory, _ sender: FakeSender, _ producer: FakeProducer, _ backend: TestMetrics) throws -> EventProcessor {
        var options = EventProcessor.Options(deadLetterTopic: "dead", tokenInvalidationTopic: "invalid")
        options.outcomeTopic = "outcomes"
        return EventProcessor(
            mappings: try MappingSet.load(files: [("m.yaml", mapping)]), sender: sender, producer: producer, directory: directory,
            options: options, metrics: PipelineMetrics(factory: backend), logger: .init(label: "test"))
    }

    static func event(_ type: String, to user: String, offset: Int64 = 0) -> KafkaMessage {
        KafkaMessage(
            topic: "events", partition: 0, offset: offset, key: nil, value: Array(#"{"type":"\#(type)","id":"e-\#(offset)","to":"\#(user)"}"#.utf8))
    }

    static func outcomes(_ producer: FakeProducer) throws -> [JSONValue] {
        try producer.written.filter { $0.topic == "outcomes" }.map { try JSONParser.parse($0.value ?? []) }
    }

    static let directory = Directory([
        "muter": UserRecord(
            devices: [UserDevice(kind: .token, id: "m-phone-00000001")],
            preferences: UserPreferences(choices: UserChoices(muted: ["social", "security"]))),
        "split": UserRecord(devices: [
            UserDevice(kind: .token, id: "s-phone-00000001", muted: ["social"]), UserDevice(kind: .fid, id: "s-tablet-0000002"),
        ]),
        "night": UserRecord(devices: [UserDevice(kind: .token, id: "n-phone-00000001")]),
    ])

    @Test("a muted category: done without a send, one outcome record `withheld` with reason code muted, counted by rule and type")
    func muted() async throws {
        let (sender, producer, backend) = (FakeSender(), FakeProducer(), TestMetrics())
        let p = try Self.processor(Self.directory, sender, producer, backend)
        let outcome = await p.process(Self.event("chat", to: "muter"))
        #expect(outcome.done && outcome.verdict.sent == 0)
        #expect(outcome.verdict.disposition == .skipped(reason: "user muter muted the category \"social\""))
        #expect(sender.accepted.isEmpty)
        let records = try Self.outcomes(producer)
        #expect(records.count == 1)
        #expect(records.first?["result"] == .string("withheld"))
        #expect(records.first?["reason_code"] == .string("muted"))
        #expect(records.first?["user"] == .string("muter"))
        #expect(records.first?["event_id"] == .string("e-0"))
        #expect(try backend.expectCounter("pushbridge_pushes_withheld_total", [("rule", "muted"), ("event_type", "chat")]).totalValue == 1)
        #expect(try backend.expectCounter("pushbridge_events_total", [("result", "skipped")]).totalValue == 1)
    }

    @Test("a device that muted the category is left out (an outcome record naming it), the user's other device gets the push")
    func deviceMuted() async throws {
        let (sender, producer, backend) = (FakeSender(), FakeProducer(), TestMetrics())
        let p = try Self.processor(Self.directory, sender, producer, backend)
        let outcome = await p.process(Self.event("chat", to: "split"))
        #expect(outcome.done && outcome.verdict.disposition == .delivered && outcome.verdict.sent == 1)
        #expect(sender.accepted == ["s-tablet-0000002"])
        let records = try Self.outcomes(producer)
        #expect(records.map { $0["result"] } == [.string("sent"), .string("withheld")])
        #expect(records.last?["reason_code"] == .string("device_muted"))
        #expect(records.last?["target"]?["id"] == .string("…00000001"))
        #expect(try backend.expectCounter("pushbridge_pushes_withheld_total", [("rule", "device_muted"), ("event_type", "chat")]).totalValue == 1)
        _ = await p.process(Self.event("chat", to: "muter", offset: 1))
        let written = producer.written.filter { $0.topic == "outcomes" }
        #expect(try await OutcomeRecordTests.validate(written) == Array(repeating: "valid", count: 3))
    }

    @Test("critical goes despite the mute, counted as bypassed; quiet hours withhold with their own reason code")
    func criticalAndQuiet() async throws {
        let (sender, producer, backend) = (FakeSender(), FakeProducer(), TestMetrics())
        let p = try Self.processor(Self.directory, sender, producer, backend)
        let login = await p.process(Self.event("login", to: "muter"))
        #expect(login.done && login.verdict.sent == 1 && sender.accepted == ["m-phone-00000001"])
        #expect(try backend.expectCounter("pushbridge_rules_bypassed_total", [("rule", "muted"), ("event_type", "login")]).totalValue == 1)

        let night = await p.process(Self.event("digest", to: "night", offset: 1))
        #expect(night.done && night.verdict.sent == 0)
        #expect(try Self.outcomes(producer).last?["reason_code"] == .string("quiet_hours"))
        #expect(try backend.expectCounter("pushbridge_pushes_withheld_total", [("rule", "quiet_hours"), ("event_type", "digest")]).totalValue == 1)
    }
}
