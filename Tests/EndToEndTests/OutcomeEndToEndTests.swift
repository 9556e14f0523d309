import FCMEmulator
import Foundation
import JSON
import Kafka
import TestSupport
import Testing

/// `topics.outcomes` on tansu: a worker writes one record per push, of every kind, and
/// commits past an event only with its records written (docs/operations.md, *Outcome records*).
@Suite("Outcome records on tansu", .serialized)
struct OutcomeEndToEndTests {
    @Test("sent, invalidated, failed, skipped and dead_lettered, one record each per push, keyed by the event")
    func everyKind() async throws {
        var faults = EmulatorFaults()
        faults.tokenPrefixes = ["dead-": "UNREGISTERED", "alien-": "SENDER_ID_MISMATCH"]
        let e = try await EndToEnd(faults: faults)
        try await e.createTopic("outcomes", partitions: 1)
        let worker = try await e.startWorker(group: "e2e-outcomes", outcomes: "outcomes")
        let good = try await e.produce(20, prefix: "ok")
        try await e.produce(2, prefix: "dead-phone")
        try await e.produce(1, prefix: "alien-phone")
        try await e.produceRaw([
            #"{"type":"order.unmapped","id":"u-1"}"#,  // no mapping: skipped
            #"{"type":"user.welcome","id":"m-1","name":"N"}"#,  // no token: dead-lettered (missing_field)
        ])
        #expect(try await e.waitUntilCommitted(group: "e2e-outcomes"), "\(worker.output.suffix(2000))")
        let records = try await e.read("outcomes", count: 25)
        let values = records.compactMap { try? JSONParser.parse($0.value) }
        func results(_ kind: String) -> [JSONValue] { values.filter { $0["result"] == .string(kind) } }
        #expect(results("sent").count == 20)
        #expect(results("invalidated").count == 2 && results("invalidated").allSatisfy { $0["fcm_error"] == .string("UNREGISTERED") })
        #expect(results("failed").map { $0["fcm_error"] } == [.string("SENDER_ID_MISMATCH")])
        #expect(results("skipped").map { $0["reason_code"] } == [.string("unknown_event_type")])
        #expect(results("dead_lettered").map { $0["reason_code"] } == [.string("missing_field")])
        // Each sent record names FCM's message, which the emulator recorded for that device.
        let names = Set(e.emulator.messages.map(\.name))
        #expect(results("sent").allSatisfy { if case .string(let n)? = $0["message"] { names.contains(n) } else { false } })
        #expect(Set(results("sent").compactMap { if case .string(let id)? = $0["target"]?["id"] { id } else { nil } }).count == good.count)
        // pushbridge_outcome_records_total counts the same records by result.
        for (result, count) in [("sent", 20), ("invalidated", 2), ("failed", 1), ("skipped", 1), ("dead_lettered", 1)] {
            #expect(try worker.metric("pushbridge_outcome_records_total{result=\"\(result)\"}") == Double(count), "\(result)")
        }
        await expectCleanExit(worker)
        await e.stop()
    }
}
