import FCM
import FCMEmulator
import Foundation
import Kafka
import Mapping
import Pipeline
import TestSupport
import Testing

/// The whole pipeline in this process against librdkafka's mock cluster (the only broker with
/// fault injection) and the FCM emulator. The separate-process end-to-end tests against tansu
/// are in Tests/EndToEndTests.
@Suite("Pipeline on the mock cluster: nothing lost under faults", .serialized)
struct PipelineMockClusterTests {
    @Test("N events → exactly N accepted sends; malformed events are dead-lettered with reasons; all committed")
    func deliversAndDeadLetters() async throws {
        let h = try await PipelineHarness()
        let tokens = try await h.produce(300, prefix: "t")
        try await h.produceRaw([#"{"type":"user.welcome","#, #"{"type":"user.welcome","id":"x","name":"N"}"#, #"{"type":"other"}"#])
        let client = try h.client()
        let run = RunningPipeline(try h.pipeline(group: "g-basic", client: client))
        // Beside the whole suite on two cores the commit was not seen within 60 s twice (passing alone).
        #expect(try await h.waitUntilCommitted(group: "g-basic", timeout: .seconds(180)), "accepted so far: \(h.acceptedTokens.count) of 300")
        try await run.stop()
        #expect(h.acceptedTokens == Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }), "each token exactly once")
        let dead = try await h.read(h.deadLetterTopic, count: 2)
        let codes = dead.compactMap { $0.header("pushbridge-reason-code")?.stringValue }.sorted()
        #expect(codes == ["invalid_json", "missing_field"], "the unknown type is skipped, not dead-lettered")
        #expect(dead.allSatisfy { $0.header("pushbridge-source-topic")?.stringValue == "events" })
        await client.shutdown()
        await h.stop()
    }

    @Test("UNREGISTERED → token-invalidation records; the events are done")
    func invalidations() async throws {
        var faults = EmulatorFaults()
        faults.tokenPrefixes = ["dead-": "UNREGISTERED"]
        let h = try await PipelineHarness(faults: faults)
        try await h.produce(20, prefix: "live")
        try await h.produce(5, prefix: "dead")
        let client = try h.client()
        let run = RunningPipeline(try h.pipeline(group: "g-inv", client: client))
        #expect(try await h.waitUntilCommitted(group: "g-inv"))
        try await run.stop()
        let records = try await h.read(h.invalidationTopic, count: 5)
        let tokens = records.compactMap { try? JSONParser.parse($0.value)["token"] }.compactMap { if case .string(let s) = $0 { s } else { nil } }
        #expect(tokens.sorted() == (0..<5).map { "dead-\($0)" })
        #expect(h.acceptedTokens.count == 20)
        await client.shutdown()
        await h.stop()
    }

    @Test("503 and 429 bursts → everything delivered after retries")
    func bursts() async throws {
        var faults = EmulatorFaults()
        faults.burst = .init(status: 503, count: 40, retryAfterSeconds: nil)
        let h = try await PipelineHarness(faults: faults)
        let tokens = try await h.produce(100, prefix: "b")
        let client = try h.client { $0.retry.quotaPause = .milliseconds(200) }
        let run = RunningPipeline(try h.pipeline(group: "g-burst", client: client))
        #expect(try await h.waitUntilCommitted(group: "g-burst"))
        faults.burst = .init(status: 429, count: 10, retryAfterSeconds: nil)
        h.emulator.setFaults(faults)
        let more = try await h.produce(50, prefix: "q")
        #expect(try await h.waitUntilCommitted(group: "g-burst"))
        try await run.stop()
        #expect(Set(h.acceptedTokens.keys) == Set(tokens + more))
        #expect(h.emulator.attempts.count >= 150 + 50, "the failed attempts were retried")
        await client.shutdown()
        await h.stop()
    }

    @Test("commit errors lose nothing and commit everything in the end")
    func commitErrors() async throws {
        let h = try await PipelineHarness()
        let tokens = try await h.produce(200, prefix: "c")
        h.cluster.pushRequestErrors(.offsetCommit, [.requestTimedOut, .notCoordinator, .coordinatorNotAvailable, .requestTimedOut, .notCoordinator])
        let client = try h.client()
        let run = RunningPipeline(try h.pipeline(group: "g-commit", client: client))
        #expect(try await h.waitUntilCommitted(group: "g-commit"))
        try await run.stop()
        #expect(Set(h.acceptedTokens.keys) == Set(tokens))
        await client.shutdown()
        await h.stop()
    }

    @Test("the group coordinator moving and a broker going down and up mid-run lose nothing")
    func coordinatorAndBrokerFaults() async throws {
        let h = try await PipelineHarness()
        var all = try await h.produce(200, prefix: "a")
        let client = try h.client()
        let run = RunningPipeline(try h.pipeline(group: "g-faults", client: client))
        #expect(try await h.waitUntilCommitted(group: "g-faults"))
        try h.cluster.setGroupCoordinator("g-faults", brokerID: 2)
        all += try await h.produce(200, prefix: "b")
        try h.cluster.setGroupCoordinator("g-faults", brokerID: 3)
        #expect(try await h.waitUntilCommitted(group: "g-faults"))
        try h.cluster.setBrokerDown(1)
        try await Task.sleep(for: .seconds(1))
        try h.cluster.setBrokerUp(1)
        all += try await h.produce(200, prefix: "c")
        #expect(try await h.waitUntilCommitted(group: "g-faults", timeout: .seconds(90)))
        try await run.stop()
        #expect(Set(h.acceptedTokens.keys) == Set(all))
        await client.shutdown()
        await h.stop()
    }

    @Test("stopped mid-stream: the commit covers only acknowledged events, and a restart delivers the rest")
    func stopAndRestart() async throws {
        var faults = EmulatorFaults()
        faults.latencyMilliseconds = 300
        let h = try await PipelineHarness(faults: faults)
        let tokens = try await h.produce(400, prefix: "s")
        let client = try h.client { $0.concurrency.ceiling = 20 }
        let first = RunningPipeline(try h.pipeline(group: "g-restart", client: client) { $0.shutdownTimeout = .milliseconds(100) })
        while h.acceptedTokens.count < 60 { try await Task.sleep(for: .milliseconds(20)) }
        try await first.stop()
        await client.shutdown()
        let acceptedAtStop = h.acceptedTokens
        let committed = try await h.committed(group: "g-restart")
        #expect(acceptedAtStop.count < tokens.count, "stopped mid-stream")
        // Everything below each committed offset was acknowledged by FCM before the stop.
        let below = try await h.events.keysBelow(committed)
        for token in below { #expect(acceptedAtStop[token] != nil, "\(token) is committed but was never acknowledged") }
        #expect(below.count == committed.values.reduce(0, +))

        h.emulator.setFaults(EmulatorFaults())
        let client2 = try h.client()
        let second = RunningPipeline(try h.pipeline(group: "g-restart", client: client2))
        #expect(try await h.waitUntilCommitted(group: "g-restart"))
        try await second.stop()
        #expect(Set(h.acceptedTokens.keys) == Set(tokens), "no loss across the restart")
        await client2.shutdown()
        await h.stop()
    }

    @Test("two workers in one group share the partitions and the work")
    func twoWorkers() async throws {
        let h = try await PipelineHarness(partitions: 4)
        let tokens = try await h.produce(200, prefix: "w")
        let c1 = try h.client()
        let c2 = try h.client()
        let p1 = try h.pipeline(group: "g-two", client: c1)
        let p2 = try h.pipeline(group: "g-two", client: c2)
        let r1 = RunningPipeline(p1)
        let r2 = RunningPipeline(p2)
        var shared = false
        for _ in 0..<150 where !shared {
            shared = !p1.assignment.isEmpty && !p2.assignment.isEmpty
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(shared, "both workers hold partitions")
        #expect(p1.assignment.isDisjoint(with: p2.assignment))
        let more = try await h.produce(200, prefix: "v")
        #expect(try await h.waitUntilCommitted(group: "g-two"))
        try await r1.stop()
        try await r2.stop()
        #expect(Set(h.acceptedTokens.keys) == Set(tokens + more))
        let refreshes = (c1.tokenRefreshes, c2.tokenRefreshes)
        #expect(refreshes == (1, 1), "each worker sent (a token is fetched on the first send)")
        await c1.shutdown()
        await c2.shutdown()
        await h.stop()
    }

    @Test("fcm.project_sends_per_second is split by partitions held: shares follow rebalances and never add up to more")
    func projectQuotaShare() async throws {
        let h = try await PipelineHarness(partitions: 4)
        let tokens = try await h.produce(100, prefix: "s")
        let c1 = try h.client()
        let c2 = try h.client { $0.maxSendsPerSecond = 100 }  // a per-worker cap below its share: the lower holds
        let quota: (inout Pipeline.Configuration) -> Void = {
            $0.projectQuotas = [FCMProjects.singleName: ProjectQuotaShare(projectSendsPerSecond: 1000)]
        }
        let p1 = try h.pipeline(group: "g-share", client: c1, configure: quota)
        let r1 = RunningPipeline(p1)
        #expect(await eventually(timeout: .seconds(30)) { p1.assignment.count == 4 && c1.maxSendsPerSecond == 1000 }, "alone: the whole rate")

        let p2 = try h.pipeline(group: "g-share", client: c2, configure: quota)
        let r2 = RunningPipeline(p2)
        let split = await eventually(timeout: .seconds(30)) {
            let (n1, n2) = (p1.assignment.count, p2.assignment.count)
            return n1 > 0 && n2 > 0 && n1 + n2 == 4 && c1.maxSendsPerSecond == 250 * Double(n1)
                && c2.maxSendsPerSecond == min(100, 250 * Double(n2))
        }
        #expect(
            split,
            "\(p1.assignment.count) and \(p2.assignment.count) partitions: \(c1.maxSendsPerSecond ?? 0) and \(c2.maxSendsPerSecond ?? 0) sends/s")
        let more = try await h.produce(100, prefix: "t")
        #expect(try await h.waitUntilCommitted(group: "g-share"))

        try await r2.stop()
        #expect(
            await eventually(timeout: .seconds(30)) { p1.assignment.count == 4 && c1.maxSendsPerSecond == 1000 },
            "the one left gets the whole rate back")
        try await r1.stop()
        #expect(Set(h.acceptedTokens.keys) == Set(tokens + more))
        await c1.shutdown()
        await c2.shutdown()
        await h.stop()
    }
}
