import FCMEmulator
import Foundation
import Kafka
import TestSupport
import Testing

/// `cap` and `dedup` with `pushbridge run` as a separate process on tansu (docs/rules.md): the
/// source topic keyed by device token (direct mode, `rules.source.keyed_by`), each partition's
/// state in the worker's rules store, restored from the changelog topic by the next worker.
@Suite("Caps and dedup: pushbridge run on a topic keyed by subject (tansu, direct mode)", .serialized)
struct RulesEngineEndToEndTests {
    static let mapping = """
        version: 1
        event: {id: /id}
        events:
          chat.message:
            target: {token: {field: /token}}
            body: {key: new_message}
            cap: {max: 2, per: 1h, by: [device]}
        """

    static let group = "e2e-rules"

    static func rules(_ e: EndToEnd) -> String {
        """
        rules:
          source: {keyed_by: user, partitioner: murmur2}
          state_path: \(e.directory.appendingPathComponent("rules.sqlite").path)
        """
    }

    /// Events keyed by their token, each in the partition Java's partitioner (murmur2) gives its
    /// key among `partitions`, unless `partition` names another.
    static func records(
        _ e: EndToEnd, _ events: [(id: String, token: String)], partitions: Int32 = 2, partition: Int32? = nil
    ) -> [KafkaProducerRecord] {
        events.map { event in
            let key = Array(event.token.utf8)
            let value = #"{"type":"chat.message","id":"\#(event.id)","token":"\#(event.token)"}"#
            return KafkaProducerRecord(
                topic: e.topic, partition: partition ?? KafkaPartitioner.murmur2.partition(of: key, count: partitions), key: key,
                value: Array(value.utf8))
        }
    }

    @Test(
        "a cap per device withholds the third push, an event written twice goes once, a record outside its key's partition is dead-lettered; a second worker restores the state and the cap still holds"
    )
    func capAndDedupAcrossRestart() async throws {
        let e = try await EndToEnd(partitions: 2)
        try await e.createTopic("pushbridge.\(Self.group).rules-changelog", partitions: 2)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let first = try await e.startWorker(group: Self.group, sections: Self.rules(e))

        // ann: 4 events, a cap of 2 per hour. ben: one event written twice (same ID), and one more.
        try await e.events.produceInOrder(
            records: Self.records(e, [("a1", "ann"), ("a2", "ann"), ("a3", "ann"), ("b1", "ben"), ("b1", "ben"), ("a4", "ann"), ("b2", "ben")]))
        // cat's record in the partition its key does not hash to.
        let wrong = KafkaPartitioner.murmur2.partition(of: Array("cat".utf8), count: 2) == 0 ? Int32(1) : 0
        try await e.events.produceInOrder(records: Self.records(e, [("c1", "cat")], partition: wrong))
        #expect(try await e.waitUntilCommitted(group: Self.group, timeout: .seconds(120)), "\(first.output.suffix(3000))")
        #expect(e.acceptedTokens["ann"] == 2, "\(e.acceptedTokens)")
        #expect(e.acceptedTokens["ben"] == 2, "\(e.acceptedTokens)")
        #expect(e.acceptedTokens["cat"] == nil)
        #expect(try first.metric(#"pushbridge_pushes_withheld_total{rule="cap",event_type="chat.message"}"#) == 2)
        #expect(try first.metric(#"pushbridge_pushes_withheld_total{rule="duplicate",event_type="chat.message"}"#) == 1)
        let dead = try await e.events.readAll(e.deadLetterTopic, idle: .seconds(3))
        #expect(dead.count == 1 && dead.first?.header("pushbridge-reason-code")?.stringValue == "not_keyed_by_subject")
        await expectCleanExit(first)

        // A new worker with an empty store: the changelog says what was sent.
        try? FileManager.default.removeItem(at: e.directory.appendingPathComponent("rules.sqlite"))
        let second = try await e.startWorker(group: Self.group, sections: Self.rules(e))
        try await e.events.produceInOrder(records: Self.records(e, [("a5", "ann"), ("b1", "ben"), ("d1", "dan")]))
        #expect(try await e.waitUntilCommitted(group: Self.group, timeout: .seconds(120)), "\(second.output.suffix(3000))")
        #expect(e.acceptedTokens["dan"] == 1)
        #expect(e.acceptedTokens["ann"] == 2 && e.acceptedTokens["ben"] == 2, "\(e.acceptedTokens)")
        #expect(try second.metric(#"pushbridge_pushes_withheld_total{rule="cap",event_type="chat.message"}"#) == 1)
        #expect(try second.metric(#"pushbridge_pushes_withheld_total{rule="duplicate",event_type="chat.message"}"#) == 1)
        await expectCleanExit(second)
        await e.stop()
    }

    @Test("a worker whose rules changelog topic does not exist stops, naming the topic and how to create it")
    func changelogMissing() async throws {
        let e = try await EndToEnd(partitions: 2)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let config = try e.config(group: "e2e-rules-nochangelog", httpPort: 0, sections: Self.rules(e))
        let (status, output) = try await e.pushbridge(["run", "--config", config], timeout: .seconds(90))
        #expect(status != 0, "\(output)")
        #expect(
            output.contains(
                "the rules changelog pushbridge.e2e-rules-nochangelog.rules-changelog does not exist, and events has 2: create it with as many"),
            "\(output)")
        await e.stop()
    }

    @Test(
        "on a topic not keyed by user, events of a capped mapping are re-keyed into the by-subject topic and decided there: the cap and the duplicate hold"
    )
    func rekeyMode() async throws {
        let e = try await EndToEnd(partitions: 2)
        let group = "e2e-rekey"
        try await e.createTopic("pushbridge.\(group).by-subject", partitions: 3)
        try await e.createTopic("pushbridge.\(group).rules-changelog", partitions: 3)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let worker = try await e.startWorker(
            group: group, sections: "rules: {state_path: \(e.directory.appendingPathComponent("rules.sqlite").path)}")
        // Keys that are not the subject (the harness's producer keys by position), one event twice.
        let events = [("a1", "ann"), ("a2", "ann"), ("a3", "ann"), ("b1", "ben"), ("b1", "ben"), ("a4", "ann"), ("b2", "ben")]
        try await e.produceRaw(events.map { #"{"type":"chat.message","id":"\#($0.0)","token":"\#($0.1)"}"# })
        #expect(try await e.waitUntilCommitted(group: group), "\(worker.output.suffix(3000))")
        let decided = try await eventually(timeout: .seconds(90), every: .milliseconds(300)) {
            let withheld =
                try worker.metric(#"pushbridge_pushes_withheld_total{rule="cap",event_type="chat.message"}"#)
                + worker.metric(#"pushbridge_pushes_withheld_total{rule="duplicate",event_type="chat.message"}"#)
            return withheld == 3 && e.acceptedTokens.values.reduce(0, +) == 4
        }
        #expect(decided, "\(e.acceptedTokens)\n\(worker.output.suffix(3000))")
        #expect(e.acceptedTokens == ["ann": 2, "ben": 2], "\(e.acceptedTokens)")
        #expect(try worker.metric(#"pushbridge_pushes_withheld_total{rule="cap",event_type="chat.message"}"#) == 2)
        #expect(try worker.metric(#"pushbridge_pushes_withheld_total{rule="duplicate",event_type="chat.message"}"#) == 1)
        #expect(try worker.metric("pushbridge_rules_rekeyed_total") == 7)
        #expect(try worker.metric("pushbridge_partitions_assigned") == 5, "both pipelines' partitions: 2 of the source, 3 by subject")
        await expectCleanExit(worker)
        await e.stop()
    }
}
