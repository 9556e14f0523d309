import Dates
import Foundation
import JSON
import Kafka
import ProcessHarness
import TestSupport
import Testing

/// `pushbridge timers list` and `cancel` against a running worker on tansu (docs/timers.md,
/// *Cancelling*): list shows a subject's waiting pushes; cancel writes one record to the cancel
/// topic, after which the worker sends none of the pushes it covers (each ends skipped as
/// `timer_cancelled`, with an outcome record) and all the others at their due time.
@Suite("pushbridge timers list/cancel (separate processes)", .serialized)
struct TimersCLIEndToEndTests {
    static let sections = "timers: {topic: e2e-timers, cancels_topic: e2e-timer-cancels, levels: 6, buckets: 1}"
    static let mapping = """
        version: 1
        events:
          reminder:
            target: {user: {field: /user}}
            body: {key: reminder_body, args: [{field: /title}]}
            send_at: {field: /at}
        """
    static let users = ["keep", "drop", "drop-2"]

    /// Each user with one phone, `<user>-phone`, in the registry topic `devices`.
    static func register(_ e: EndToEnd) async throws {
        try await e.createTopic("devices", partitions: 1)
        let backend = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: [e.bootstrapServers]))
        for user in users { _ = try await backend.send(phone(of: user)) }
        await backend.close()
    }

    /// `user`'s registry record: one phone, `<user>-phone`.
    static func phone(of user: String) -> KafkaProducerRecord {
        KafkaProducerRecord(topic: "devices", key: Array(user.utf8), value: Array(#"{"devices": [{"token": "\#(user)-phone"}]}"#.utf8))
    }

    static func reminder(_ user: String, due: Int64) -> String {
        #"{"type":"reminder","id":"r-\#(user)","user":"\#(user)","title":"Dentist","at":"\#(RFC3339.format(milliseconds: due))"}"#
    }

    @Test("run (tansu): list shows the waiting pushes; a cancelled one is never sent and ends as timer_cancelled, the others go at their due")
    func listAndCancel() async throws {
        let e = try await SendAtEndToEndTests.start(.tansu)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        try await e.createTopic("e2e-timer-cancels", partitions: 1)
        try await e.createTopic("e2e-outcomes", partitions: 1)
        try await Self.register(e)
        let store = e.directory.appendingPathComponent("registry.sqlite").path
        let sections = Self.sections + "\nregistry: {topic: devices, path: \(store)}"
        let worker = try await e.startWorker(group: "e2e-timers-cli", sections: sections, outcomes: "e2e-outcomes")
        let config = try e.config(group: "e2e-timers-cli", httpPort: try FreePort.next(), sections: Self.sections)
        // Time for the commit, two lists and two cancels before it, on a loaded machine.
        let due = RFC3339.nowMilliseconds() + 45_000
        try await e.produceRaw(Self.users.map { Self.reminder($0, due: due) })
        #expect(try await e.waitUntilCommitted(group: "e2e-timers-cli"), "\(worker.output.suffix(2000))")

        let (listed, table) = try await e.pushbridge(["timers", "list", "--config", config, "--user", "drop"])
        #expect(listed == 0, "\(table)")
        #expect(table.contains("due \(RFC3339.format(milliseconds: due))  send_at"), "\(table)")
        #expect(table.contains("1 pending for drop"), "\(table)")
        let (_, json) = try await e.pushbridge(["timers", "list", "--config", config, "--user", "drop-2", "--json"])
        let line = try #require(json.split(separator: "\n").first { $0.hasPrefix("{") })
        let object = try JSONParser.parse(String(line))
        let id = try #require(object["id"]?.stringValue)
        #expect(object["reason"]?.stringValue == "send_at" && object["cancelled"] == .bool(false), "\(object)")

        let (cancelled, said) = try await e.pushbridge(["timers", "cancel", "--config", config, "--user", "drop", "--reason", "user deleted it"])
        #expect(cancelled == 0 && said.contains("cancelled 1 pending push of drop"), "\(said)")
        let (byID, saidByID) = try await e.pushbridge(["timers", "cancel", "--config", config, "--user", "drop-2", "--id", id])
        #expect(byID == 0 && saidByID.contains("cancelled 1 pending push of drop-2"), "\(saidByID)")
        let (_, after) = try await e.pushbridge(["timers", "list", "--config", config, "--user", "drop"])
        #expect(after.contains("cancelled: user deleted it") || after.contains("0 pending for drop"), "\(after)")

        let deadline = ContinuousClock.now + .seconds(120)
        while e.acceptedTokens["keep-phone"] == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(200)) }
        let outcomes = try await e.read("e2e-outcomes", count: 6).map { try JSONParser.parse($0.value) }
        #expect(e.acceptedTokens == ["keep-phone": 1], "\(e.acceptedTokens)\n\(worker.output.suffix(2000))")
        let skipped = outcomes.filter { $0["result"]?.stringValue == "skipped" }
        #expect(skipped.count == 2 && skipped.allSatisfy { $0["reason_code"]?.stringValue == "timer_cancelled" }, "\(outcomes)")
        #expect(skipped.contains { $0["reason"]?.stringValue?.contains("user deleted it") == true }, "\(skipped)")
        #expect(try worker.metric("pushbridge_timers_cancelled_total") == 2)
        await expectCleanExit(worker)
        await e.stop()
    }

    @Test("cancel (mock cluster): without the cancel topic it says how to create it and exits 1; a bad --id is a usage error")
    func noCancelTopic() async throws {
        let e = try await SendAtEndToEndTests.start(.mock)
        let config = try e.config(group: "e2e-timers-none", httpPort: try FreePort.next(), sections: Self.sections)
        let (status, output) = try await e.pushbridge(["timers", "cancel", "--config", config, "--user", "u1"])
        #expect(status == 1)
        #expect(output.contains("the cancel topic e2e-timer-cancels does not exist: create it"), "\(output)")
        let (bad, usage) = try await e.pushbridge(["timers", "cancel", "--config", config, "--user", "u1", "--id", "nope"])
        #expect(bad == 2 && usage.contains("--id must be 32 hex digits"), "\(usage)")
        await e.stop()
    }
}
