import FCMEmulator
import Foundation
import JSON
import Kafka
import TestSupport
import Testing

/// The per-user rules with `pushbridge run` as a separate process (docs/rules.md): preferences
/// produced to the device registry topic, read by the worker's follower, judged per push. Quiet
/// hours are a window around now in Asia/Kathmandu (+05:45), so they hold whenever the test runs
/// and a user in UTC is outside them.
@Suite("Per-user rules: mutes, device mutes, quiet hours in the user's zone, critical (pushbridge run, tansu)", .serialized)
struct UserRulesEndToEndTests {
    /// HH:MM in Asia/Kathmandu, `minutes` from now (Foundation's zone data, not pushbridge's).
    static func kathmandu(_ minutes: Int) -> String {
        localClock(minutesFromNow: minutes, offsetSeconds: TimeZone(identifier: "Asia/Kathmandu")!.secondsFromGMT(for: Date()))
    }

    static func mapping() -> String {
        """
        version: 1
        event: {id: /id}
        events:
          chat:
            target: {user: {field: /to}}
            category: social
            quiet_hours: {from: "\(kathmandu(-120))", to: "\(kathmandu(120))"}
            body: {key: new_message}
          alert:
            target: {user: {field: /to}}
            category: social
            critical: true
            body: {key: new_login}
          nudge:
            target: {token: {field: /token}}
            user: {field: /to}
            category: social
            body: {key: nudge}
        """
    }

    static func event(_ id: String, _ type: String, to user: String, token: String = "") -> String {
        #"{"type":"\#(type)","id":"\#(id)","to":"\#(user)","token":"\#(token)"}"#
    }

    @Test(
        "a muted category and a device's mute withhold, quiet hours withhold in the user's zone (or the default one for a zone the machine does not know), off and critical send; each counted by rule"
    )
    func rules() async throws {
        let e = try await EndToEnd(partitions: 2)
        try await e.createTopic("devices", partitions: 2)
        try Self.mapping().write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let registry: [(String, String)] = [
            ("ann", #"{"devices": [{"token": "ann-phone"}], "time_zone": "UTC", "muted": ["social"]}"#),
            ("ben", #"{"devices": [{"token": "ben-phone", "muted": ["social"]}, {"token": "ben-tablet"}], "time_zone": "UTC"}"#),
            ("cat", #"{"devices": [{"token": "cat-phone"}], "time_zone": "Asia/Kathmandu"}"#),
            ("dan", #"{"devices": [{"token": "dan-phone"}], "time_zone": "Asia/Kathmandu", "quiet_hours": "off"}"#),
            ("eve", #"{"devices": [{"token": "eve-phone"}], "time_zone": "Mars/Olympus_Mons"}"#),
            ("fay", #"{"devices": [{"token": "fay-phone"}], "time_zone": "UTC", "muted": "social"}"#),
        ]
        let backend = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: [e.bootstrapServers]))
        for (user, value) in registry {
            _ = try await backend.send(KafkaProducerRecord(topic: "devices", key: Array(user.utf8), value: Array(value.utf8)))
        }
        try await e.produceRaw(
            ["ann", "ben", "cat", "dan", "eve", "fay"].enumerated().map { Self.event("c\($0.offset)", "chat", to: $0.element) }
                + [
                    Self.event("a1", "alert", to: "ann"), Self.event("n1", "nudge", to: "ann", token: "ann-watch"),
                    Self.event("n2", "nudge", to: "dan", token: "dan-watch"),
                ])
        let store = e.directory.appendingPathComponent("registry.sqlite").path
        let worker = try await e.startWorker(
            group: "e2e-rules", sections: "registry: {topic: devices, path: \(store)}\nrules: {default_time_zone: Asia/Kathmandu}")
        #expect(try await e.waitUntilCommitted(group: "e2e-rules"), "\(worker.output.suffix(2000))")

        // Sent: ben's tablet (his phone muted social), dan (quiet hours off), fay (her malformed
        // mute left out), ann's critical alert despite her mute, and dan's nudge to a device the
        // event names (user: dan); ann's nudge is withheld by her mute.
        #expect(
            e.acceptedTokens == ["ben-tablet": 1, "dan-phone": 1, "fay-phone": 1, "ann-phone": 1, "dan-watch": 1], "\(e.acceptedTokens)")
        #expect(try withheld("muted", "nudge") == 1, "ann's, named by user:")
        func withheld(_ rule: String, _ type: String = "chat") throws -> Double {
            try worker.metric(#"pushbridge_pushes_withheld_total{rule="\#(rule)",event_type="\#(type)"}"#)
        }
        #expect(try withheld("muted") == 1, "ann")
        #expect(try withheld("device_muted") == 1, "ben's phone")
        #expect(try withheld("quiet_hours") == 2, "cat in Kathmandu; eve's unknown zone judged in the default, Kathmandu")
        #expect(try worker.metric(#"pushbridge_rules_bypassed_total{rule="muted",event_type="alert"}"#) == 1)
        #expect(try worker.metric(#"pushbridge_registry_invalid_preferences_total{member="muted"}"#) == 1)
        #expect(try worker.metric(#"pushbridge_events_total{result="skipped"}"#) == 4)
        #expect(try worker.metric("pushbridge_rules_unknown_time_zone_total") == 1, "eve's event, judged in the default zone")
        #expect(worker.output.contains("Mars/Olympus_Mons"), "the unknown zone is named in a warning")
        await expectCleanExit(worker)
        await backend.close()
        await e.stop()
    }

    @Test("rules.default_time_zone that the machine does not know: the worker refuses to start, naming the key (exit 2)")
    func unknownDefaultZone() async throws {
        let e = try await EndToEnd(partitions: 1)
        try Self.mapping().write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let config = try e.config(
            group: "e2e-rules-zone", httpPort: 0, sections: "registry: {topic: devices}\nrules: {default_time_zone: Europe/Atlantis}")
        let (status, output) = try await e.pushbridge(["run", "--config", config], timeout: .seconds(60))
        #expect(status == 2, "\(output)")
        #expect(output.contains(#"rules.default_time_zone "Europe/Atlantis" is not a time zone this machine knows"#), "\(output)")
        await e.stop()
    }

    @Test("a mapping whose rules read a user named beside its device target, with no registry configured: the worker refuses to start (exit 2)")
    func namedUserNeedsRegistry() async throws {
        let e = try await EndToEnd(partitions: 1)
        let mapping =
            "version: 1\nevents:\n  nudge:\n    target: {token: {field: /token}}\n    user: {field: /to}\n    category: social\n    body: {key: nudge}\n"
        try mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let config = try e.config(group: "e2e-rules-named", httpPort: 0)
        let (status, output) = try await e.pushbridge(["run", "--config", config], timeout: .seconds(60))
        #expect(status == 2, "\(output)")
        #expect(
            output.contains(
                #"mappings.yaml:3: event "nudge" names a user whose preferences its rules read (user:), and no device registry is configured"#),
            "\(output)")
        await e.stop()
    }
}
