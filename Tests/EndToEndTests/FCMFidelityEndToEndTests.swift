import FCMEmulator
import Foundation
import Kafka
import Mapping
import TestSupport
import Testing

/// `pushbridge run` against the emulator answering as FCM documents it: dead and malformed
/// tokens, one device over its own quota, and an outage. What must hold is what a user relies
/// on: every dead token reported, nothing good dead-lettered, nobody held back for someone else.
@Suite("pushbridge run against FCM's documented answers: invalid tokens, a throttled device, an outage", .serialized)
struct FCMFidelityEndToEndTests {
    @Test("invalidation records for every invalid or unregistered token, nothing else dead-lettered, other devices delivered while one is throttled")
    func documentedAnswers() async throws {
        var faults = EmulatorFaults()
        faults.tokenPrefixes = ["dead-": "UNREGISTERED", "bad-": "INVALID_ARGUMENT"]  // INVALID_ARGUMENT: the error-codes guide's Example 2
        // The chatty phone's 12 events take 88 s at least: time for the later devices even on a
        // loaded machine (a full CI run once took over 20 s to deliver them, a full local run
        // with the Schema Registry suites beside it over 44 s).
        faults.quotas.device = .init(limit: 1, window: .seconds(8))
        let e = try await EndToEnd(faults: faults)
        let worker = try await e.startWorker(group: "e2e-fidelity", retry: "initial_backoff_ms: 50, max_backoff_ms: 500, quota_pause_ms: 30000")
        let chatty = (0..<12).map { #"{"type":"user.welcome","id":"chatty-\#($0)","name":"N","token":"chatty-phone"}"# }
        try await e.produceRaw(chatty)
        var tokens = try await e.produce(200, prefix: "t")
        try await e.produce(3, prefix: "dead-token")
        try await e.produce(3, prefix: "bad-token")
        // Once FCM holds the phone back, more devices: they are delivered while it is still held.
        let emulator = e.emulator
        try #require(await eventually(timeout: .seconds(60)) { emulator.attempts.contains { $0.token == "chatty-phone" && $0.status == 429 } })
        let later = try await e.produce(50, prefix: "later")
        try #require(await eventually(timeout: .seconds(60)) { later.allSatisfy { emulator.acceptedTokens[$0] != nil } })
        #expect(emulator.acceptedTokens["chatty-phone", default: 0] < 12, "the later devices did not wait for the throttled phone")
        tokens += later
        #expect(try await e.waitUntilCommitted(group: "e2e-fidelity", timeout: .seconds(240)), "\(worker.output.suffix(2000))")

        #expect(e.acceptedTokens["chatty-phone"] == 12, "every event to the throttled phone delivered in the end")
        for token in tokens { #expect(e.acceptedTokens[token] == 1, "\(token)") }
        // Nobody else was refused or retried: each other device's only attempt was accepted.
        let others = emulator.attempts.filter {
            $0.token != "chatty-phone" && !($0.token ?? "").hasPrefix("dead-") && !($0.token ?? "").hasPrefix("bad-")
        }
        #expect(others.count == tokens.count && others.allSatisfy { $0.status == 200 })
        let invalid = try await e.read(e.invalidationTopic, count: 6)
        let reported = Dictionary(
            invalid.compactMap { record -> (String, String)? in
                guard let json = try? JSONParser.parse(record.value), case .string(let token)? = json["token"],
                    case .string(let reason)? = json["reason"]
                else { return nil }
                return (token, reason)
            }, uniquingKeysWith: { a, _ in a })
        #expect(
            reported == [
                "dead-token-0": "UNREGISTERED", "dead-token-1": "UNREGISTERED", "dead-token-2": "UNREGISTERED",
                "bad-token-0": "INVALID_ARGUMENT", "bad-token-1": "INVALID_ARGUMENT", "bad-token-2": "INVALID_ARGUMENT",
            ])
        #expect(try await e.events.readAll(e.deadLetterTopic, idle: .seconds(3)).isEmpty, "nothing dead-lettered")
        // What FCM accepted, a phone shows as meant: nothing it would ignore (docs/emulator.md, device notes).
        let deviceNotes = emulator.messages.flatMap(\.deviceNotes)
        #expect(deviceNotes.isEmpty, "\(deviceNotes)")
        #expect(try worker.metric(#"pushbridge_fcm_quota_exceeded_total{scope="device"}"#) > 0)
        #expect(try worker.metric(#"pushbridge_fcm_quota_exceeded_total{scope="project"}"#) == 0)
        #expect(try worker.metric("pushbridge_fcm_quota_pauses_total") == 0)
        await expectCleanExit(worker)
        await e.stop()
    }

    @Test("an FCM outage longer than the retry budget, mid-stream: the worker holds, says so, and then delivers everything; nothing dead-lettered")
    func outage() async throws {
        var faults = EmulatorFaults()
        faults.latencyMilliseconds = 100
        let e = try await EndToEnd(faults: faults)
        let tokens = try await e.produce(1_000, prefix: "o")
        // 10 sends in flight at 100 ms: about 100 events a second, so the outage lands mid-stream.
        // A budget of 2 s, which the outage (5 s or more) outlasts: only time FCM answers counts.
        let worker = try await e.startWorker(
            group: "e2e-outage", delivery: "max_sends_in_flight: 10",
            retry: "initial_backoff_ms: 20, max_backoff_ms: 500, quota_pause_ms: 300, budget_ms: 2000")
        let emulator = e.emulator
        // Watched from a thread of its own: on a loaded machine the test's pool threads can be
        // busy for seconds, and the stream must not end before the outage begins.
        var outage = faults
        outage.rate = .init(status: 503, probability: 1)
        let acceptedAtOutage = try await offPool { [outage] in
            while emulator.messages.count < 100 { usleep(5_000) }
            emulator.setFaults(outage)
            return emulator.messages.count
        }
        try #require(acceptedAtOutage < tokens.count, "the outage began mid-stream")
        // Readiness says so once FCM has not answered for 5 s; the outage lasts until it does.
        var ready = try worker.get("/readyz")
        let deadline = ContinuousClock.now + .seconds(30)
        while ready.status == 200, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            ready = try worker.get("/readyz")
        }
        #expect(ready.status == 503 && ready.body.contains("waiting on FCM"), "\(ready)")
        #expect(try worker.metric("pushbridge_fcm_waiting_seconds") >= 5)
        #expect(emulator.messages.count == acceptedAtOutage, "nothing accepted during the outage")
        emulator.setFaults(faults)

        #expect(try await e.waitUntilCommitted(group: "e2e-outage", timeout: .seconds(120)), "\(worker.output.suffix(2000))")
        #expect(e.acceptedTokens == Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }), "every event delivered once")
        let deviceNotes = emulator.messages.flatMap(\.deviceNotes)
        #expect(deviceNotes.isEmpty, "\(deviceNotes)")
        #expect(try await e.events.readAll(e.deadLetterTopic, idle: .seconds(3)).isEmpty, "nothing dead-lettered")
        #expect(try worker.metric("pushbridge_fcm_waiting_seconds") == 0)
        #expect(try worker.get("/readyz").status == 200)
        // The log tells the outage as an operator reads it: when it started and when it ended,
        // not a line per failed attempt.
        let lines = worker.output.split(separator: "\n")
        #expect(lines.count { $0.contains("FCM stopped answering") } == 1, "\(worker.output.suffix(3000))")
        #expect(lines.count { $0.contains("FCM answering again after") } == 1, "\(worker.output.suffix(3000))")
        await expectCleanExit(worker)
        await e.stop()
    }
}
