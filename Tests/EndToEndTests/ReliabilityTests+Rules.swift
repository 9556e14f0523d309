import Foundation
import Kafka
import PipelineTestSupport
import TestSupport

/// The per-user rules in the reliability runs (docs/reliability.md): 1% of each batch are
/// nudges whose mapping names a user beside the device token (`user:`) and has a category; half
/// of the ten users muted it. Their pushes are withheld, and the ledger counts them apart from
/// lost ones: done (every offset committed), never sent, never dead-lettered. About 1% more are
/// capped events (``cappedRecords(batch:topic:)``) and 1% deferred ones (``laterRecords(batch:count:topic:using:)``).
extension ReliabilityTests {
    /// The welcome events, the nudges and the capped events (``cappedMapping``). Events are
    /// identified by their `id` (`event: {id: /id}`), so a capped event written twice is one
    /// notification.
    static let rulesMapping =
        WelcomeEvents.mapping.replacingOccurrences(of: "version: 1\n", with: "version: 1\nevent: {id: /id}\n") + """

              reliability.nudge:
                target: {token: {field: /token}}
                user: {field: /user}
                category: promo
                body: {key: nudge}

            """ + cappedMapping + "\n" + laterMapping
    static let users = 10
    static func muted(_ user: Int) -> Bool { user % 2 == 0 }

    /// Writes the mapping with the nudges and the capped events, the users' records to the
    /// registry topic the workers follow (each worker catches up with it before it consumes),
    /// and creates the caps' topics.
    static func prepareRules(_ e: EndToEnd) async throws {
        try rulesMapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        try await prepareCaps(e)
        try await prepareTimers(e)
        try await e.createTopic("devices", partitions: 2)
        for u in 0..<users {
            let muted = muted(u) ? #", "muted": ["promo"]"# : ""
            let value = #"{"devices": [{"token": "home-\#(u)"}]\#(muted)}"#
            _ = try await e.events.producer.send(KafkaProducerRecord(topic: "devices", key: Array("user-\(u)".utf8), value: Array(value.utf8)))
        }
    }

    /// The registry and rules sections of the `n`th worker started (each its own stores: a
    /// restarted worker reads the registry again and restores the caps' state from the
    /// changelog, as a new pod without its volume would).
    static func rulesSections(_ e: EndToEnd, start n: Int) -> String {
        """
        registry: {topic: devices, path: \(e.directory.appendingPathComponent("registry-\(n).sqlite").path)}
        rules: {state_path: \(e.directory.appendingPathComponent("rules-\(n).sqlite").path)}
        \(timersSection)
        """
    }

    /// `count` nudges of batch `b`: the records, and the tokens whose push goes out or is withheld.
    static func nudges(batch b: Int, count: Int, topic: String) -> (records: [KafkaProducerRecord], sent: [String], withheld: [String]) {
        var records: [KafkaProducerRecord] = []
        var (sent, withheld): ([String], [String]) = ([], [])
        for k in 0..<count {
            let token = "nudge-\(b)-\(k)"
            let user = k % users
            let value = #"{"type":"reliability.nudge","id":"\#(token)","token":"\#(token)","user":"user-\#(user)"}"#
            records.append(KafkaProducerRecord(topic: topic, key: Array(token.utf8), value: Array(value.utf8)))
            if muted(user) { withheld.append(token) } else { sent.append(token) }
        }
        return (records, sent, withheld)
    }
}
