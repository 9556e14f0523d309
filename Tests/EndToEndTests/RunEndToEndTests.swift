import FCMEmulator
import Foundation
import Kafka
import Mapping
import TestSupport
import Testing

/// `pushbridge run` as a separate process against tansu and the FCM emulator, configured by
/// real files; observed through Kafka, the emulator's record and the worker's /metrics.
@Suite("pushbridge run end to end (tansu, the emulator, separate worker processes)", .serialized)
struct RunEndToEndTests {
    @Test("N events → exactly N accepted sends; bad events dead-lettered with reasons; dead tokens reported; all committed")
    func delivers() async throws {
        var faults = EmulatorFaults()
        faults.tokenPrefixes = ["dead-": "UNREGISTERED"]
        let e = try await EndToEnd(faults: faults)
        let worker = try await e.startWorker(group: "e2e-basic")
        let tokens = try await e.produce(500, prefix: "t")
        try await e.produce(3, prefix: "dead-token")
        try await e.produceRaw([#"{"type":"user.welcome","#, #"{"type":"user.welcome","id":"x","name":"N"}"#])
        #expect(try await e.waitUntilCommitted(group: "e2e-basic"), "\(worker.output.suffix(2000))")
        #expect(try worker.get("/readyz").status == 200)
        #expect(try worker.get("/healthz").status == 200)
        #expect(try worker.metric("pushbridge_sends_total{result=\"ok\"}") == 500)
        #expect(try worker.metric("pushbridge_invalidated_tokens_total") == 3)
        #expect(try worker.metric("pushbridge_dead_lettered_total") == 2)
        #expect(try worker.metric("pushbridge_send_latency_seconds_count") == 503)
        await expectCleanExit(worker)

        #expect(e.acceptedTokens == Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }))
        let dead = try await e.read(e.deadLetterTopic, count: 2)
        #expect(dead.compactMap { $0.header("pushbridge-reason-code")?.stringValue }.sorted() == ["invalid_json", "missing_field"])
        let invalid = try await e.read(e.invalidationTopic, count: 3)
        let reported = invalid.compactMap { try? JSONParser.parse($0.value)["token"] }.compactMap { if case .string(let s) = $0 { s } else { nil } }
        #expect(reported.sorted() == ["dead-token-0", "dead-token-1", "dead-token-2"])
        // JSON log lines, tokens redacted to their last 6 characters.
        let lines = worker.output.split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(lines.contains { $0.contains(#""msg":"device refused""#) && $0.contains(#""token":"…oken-0""#) })
        #expect(!worker.output.contains("dead-token-0"), "a full token in the logs")
        await e.stop()
    }

    @Test("503 and 429 bursts → everything delivered; the retries are visible in /metrics")
    func bursts() async throws {
        var faults = EmulatorFaults()
        faults.burst = .init(status: 503, count: 60)
        let e = try await EndToEnd(faults: faults)
        let worker = try await e.startWorker(group: "e2e-burst")
        let tokens = try await e.produce(200, prefix: "b")
        #expect(try await e.waitUntilCommitted(group: "e2e-burst"), "\(worker.output.suffix(2000))")
        faults.burst = .init(status: 429, count: 5)
        e.emulator.setFaults(faults)
        let more = try await e.produce(50, prefix: "q")
        #expect(try await e.waitUntilCommitted(group: "e2e-burst"), "\(worker.output.suffix(2000))")
        #expect(try worker.metric("pushbridge_send_retries_total") >= 65)
        #expect(try worker.metric("pushbridge_fcm_quota_pauses_total") == 5, "one pause per 429")
        #expect(try worker.metric("pushbridge_sends_total{result=\"ok\"}") == 250)
        // What the worker runs: in its started line and as a metric.
        let started = worker.output.split(separator: "\n").first { $0.contains(#""msg":"started""#) } ?? ""
        #expect(started.contains(#""librdkafka":"2."#) && started.contains(#""libcurl":""#) && started.contains(#""commit":""#), "\(started)")
        #expect(try worker.get("/metrics").body.contains("pushbridge_build_info{"))
        await expectCleanExit(worker)
        #expect(Set(e.acceptedTokens.keys) == Set(tokens + more))
        await e.stop()
    }

    @Test("SIGTERM mid-stream: the commit covers only acknowledged events; a restart delivers the rest")
    func sigtermAndRestart() async throws {
        var faults = EmulatorFaults()
        faults.latencyMilliseconds = 200
        let e = try await EndToEnd(faults: faults)
        let tokens = try await e.produce(600, prefix: "s")
        // 25 sends/s (5 in flight, 200 ms each): the 600 events take 24 s, so the stop lands
        // mid-stream even when a loaded machine delivers the signal seconds late.
        let first = try await e.startWorker(group: "e2e-term", delivery: "max_sends_in_flight: 5\nshutdown_timeout_ms: 500")
        let emulator = e.emulator
        first.process.signal(SIGTERM, when: { emulator.messages.count >= 80 })
        #expect(await first.process.wait(timeout: .seconds(90)) == 0, "\(first.output.suffix(2000))")
        let acceptedAtStop = e.acceptedTokens
        #expect(acceptedAtStop.count < tokens.count, "stopped mid-stream")
        let committed = try await e.committed(group: "e2e-term")
        // Every event below a committed offset was acknowledged by FCM before the stop.
        let below = try await e.events.keysBelow(committed)
        for token in below { #expect(acceptedAtStop[token] != nil, "\(token) is committed but was never acknowledged") }
        let want = committed.values.reduce(0, +)
        #expect(want > 0 && below.count == want)

        e.emulator.setFaults(EmulatorFaults())
        let second = try await e.startWorker(group: "e2e-term")
        #expect(try await e.waitUntilCommitted(group: "e2e-term"), "\(second.output.suffix(2000))")
        await expectCleanExit(second)
        #expect(Set(e.acceptedTokens.keys) == Set(tokens), "nothing lost across the restart")
        await e.stop()
    }

    /// The second worker joins a group the first already consumes in, as a scale-out does, with
    /// cooperative-sticky and static membership (the deploy/ defaults). On the mock cluster:
    /// tansu 0.6 never hands the revoked partitions to a static member that joins late
    /// (docs/testing.md).
    @Test("a worker joining later takes half the partitions; each worker reports only the partitions it holds")
    func twoWorkers() async throws {
        let e = try await EndToEnd(partitions: 4, broker: .mock)
        let w1 = try await e.startWorker(group: "e2e-two", instanceID: "worker-1")
        let early = try await e.produce(100, prefix: "v")
        #expect(try await e.waitUntilCommitted(group: "e2e-two"), "\(w1.output.suffix(1500))")
        #expect(try Self.partitionSeries(w1).count == 4, "the first worker committed on every partition")
        let w2 = try await e.startWorker(group: "e2e-two", instanceID: "worker-2")
        var both = false
        for _ in 0..<200 where !both {
            let r1 = try? w1.get("/readyz")
            let r2 = try? w2.get("/readyz")
            both = (r1?.body.hasPrefix("consuming") ?? false) && (r2?.body.hasPrefix("consuming") ?? false)
            if !both { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(both, "both workers hold partitions:\n\(w1.output.suffix(1500))\n\(w2.output.suffix(1500))")
        let tokens = try await e.produce(400, prefix: "w")
        #expect(try await e.waitUntilCommitted(group: "e2e-two"))
        let sent1 = try w1.metric("pushbridge_sends_total{result=\"ok\"}")
        let sent2 = try w2.metric("pushbridge_sends_total{result=\"ok\"}")
        #expect(sent1 > 0 && sent2 > 0 && sent1 + sent2 == 500, "\(sent1) + \(sent2)")
        let held1 = try w1.metric("pushbridge_partitions_assigned")
        let held2 = try w2.metric("pushbridge_partitions_assigned")
        #expect(held1 > 0 && held2 > 0 && held1 + held2 == 4, "\(held1) + \(held2)")
        // The first worker gave partitions up: their series went with them.
        let series1 = try Self.partitionSeries(w1)
        let series2 = try Self.partitionSeries(w2)
        #expect(series1.count == Int(held1) && series1.isDisjoint(with: series2), "\(series1) \(series2)")
        await expectCleanExit(w1)
        await expectCleanExit(w2)
        #expect(Set(e.acceptedTokens.keys) == Set(early + tokens))
        await e.stop()
    }

    /// The `partition` labels of a worker's `pushbridge_committed_offset` series.
    static func partitionSeries(_ worker: WorkerProcess) throws -> Set<String> {
        let lines = try worker.get("/metrics").body.split(separator: "\n").filter { $0.hasPrefix("pushbridge_committed_offset{") }
        return Set(
            lines.compactMap { line in
                line.firstRange(of: "partition=\"").map { r in String(line[r.upperBound...].prefix { $0 != "\"" }) }
            })
    }

    @Test("a CA that does not match FCM's certificate stops the worker (exit 1) and commits nothing")
    func untrustedServer() async throws {
        let e = try await EndToEnd()
        try await e.produce(10, prefix: "u")
        let otherDirectory = e.directory.appendingPathComponent("other-ca")
        try FileManager.default.createDirectory(at: otherDirectory, withIntermediateDirectories: true)
        let other = try await offPool { try TestCertificates.generate(in: otherDirectory) }
        let worker = try await e.startWorker(group: "e2e-ca", caFile: other.caFile)
        let status = await worker.process.wait(timeout: .seconds(60))
        #expect(status == 1, "\(worker.output.suffix(2000))")
        #expect(worker.output.contains("pushbridge: stopped:"))
        #expect(try await e.committed(group: "e2e-ca").values.allSatisfy { $0 == 0 }, "nothing was sent, so nothing past the start is committed")
        #expect(e.acceptedTokens.isEmpty)
        await e.stop()
    }

    @Test("a bad config exits 2 and names the key and line")
    func badConfig() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pb-badconfig-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let config = dir.appendingPathComponent("c.yaml").path
        try "kafka:\n  brokers: [k:1]\n  topics: [t]\nmappings: [m]\ndelivery:\n  max_event_in_flight: 5\n".write(
            toFile: config, atomically: true, encoding: .utf8)
        let r = try await ChildProcess.run(pushbridgeExecutable, ["run", "--config", config])
        #expect(r.status == 2)
        #expect(r.output.contains("c.yaml:6: unknown key delivery.max_event_in_flight (did you mean delivery.max_events_in_flight?)"), "\(r.output)")
    }
}
