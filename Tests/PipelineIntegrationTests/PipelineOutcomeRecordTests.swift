import FCMEmulator
import Foundation
import JSON
import Kafka
import MetricsTestKit
import Pipeline
import Testing

/// Outcome records written by a real producer on the mock cluster: an event whose one send is
/// delivered ends when Kafka acknowledges its outcome record, without a task (the producer's
/// delivery callback); a record Kafka refuses goes the task path, which writes it again.
@Suite("Outcome records through the producer's delivery callbacks (mock cluster)")
struct PipelineOutcomeRecordTests {
    @Test("every delivered event has one outcome record; records Kafka refused are counted and written again by the task path")
    func outcomeRecords() async throws {
        let h = try await PipelineHarness()
        try h.cluster.createTopic("outcomes", partitions: 1)
        let backend = TestMetrics()
        let client = try h.client()
        let first = try await h.produce(100, prefix: "calm")
        let metrics = PipelineMetrics(factory: backend)
        var run = RunningPipeline(try h.pipeline(group: "g-outcomes", client: client, outcomeTopic: "outcomes", metrics: metrics))
        // 14 s for the whole test alone; beside the full suite on two cores, a run took over the
        // harness's 60 s (twice, 2026-11-29 and -30): a wait for a condition, so a wide bound.
        #expect(try await h.waitUntilCommitted(group: "g-outcomes", timeout: .seconds(180)))
        try await run.stop()
        // Kafka refuses the next produce requests (a topic authorization failure is not retried
        // by librdkafka): the outcome records in them fail, and their events must not be done.
        // The events are produced first: the test's producer is the pipeline's.
        let second = try await h.produce(100, prefix: "refused")
        h.cluster.pushRequestErrors(.produce, Array(repeating: .topicAuthorizationFailed, count: 3))
        run = RunningPipeline(try h.pipeline(group: "g-outcomes", client: client, outcomeTopic: "outcomes", metrics: metrics))
        #expect(try await h.waitUntilCommitted(group: "g-outcomes", timeout: .seconds(180)))
        try await run.stop()

        let records = try await h.read("outcomes", count: 200)
        var byKey: [String: Int] = [:]
        for r in records {
            let key = String(decoding: r.key ?? [], as: UTF8.self)
            byKey[key, default: 0] += 1
            guard case .object(let members)? = try? JSONParser.parse(r.value) else {
                Issue.record("an outcome record that is not JSON: \(String(decoding: r.value, as: UTF8.self))")
                continue
            }
            #expect(members.contains { $0.key == "result" && $0.value == .string("sent") }, "\(key)")
        }
        // The welcome events' mapping names no event ID: the records are keyed by the events'
        // source coordinates.
        #expect(byKey.count == 200 && byKey.keys.allSatisfy { $0.hasPrefix("events/") }, "one outcome record per event: \(byKey.count)")
        #expect(Set(h.acceptedTokens.keys) == Set(first + second))
        let writeErrors = try backend.expectCounter("pushbridge_record_write_errors_total").totalValue
        #expect(writeErrors >= 1, "the refused records were counted and written again")
        #expect(try backend.expectCounter("pushbridge_outcome_records_total", [("result", "sent")]).totalValue >= 200)
        await client.shutdown()
        await h.stop()
    }
}
