import FCM
import FCMEmulator
import Foundation
import JSON
import TestSupport
import Testing

/// The FCM client against the emulator answering as FCM does when it throttles, fails or
/// refuses: who waits, who goes on, and what is given up. Timing checks are orderings from the
/// emulator's recorded arrival times, never speed tests.
@Suite("FCM client: quotas, outages and FCM's HTTP/2 front end", .serialized)
struct FCMClientFaultTests {
    /// Sends each (token, count) concurrently; returns each token's results.
    static func sendAll(_ client: FCMClient, _ plan: [(token: String, count: Int)]) async -> [String: [FCMClient.SendResult]] {
        await withTaskGroup(of: (String, FCMClient.SendResult).self) { group in
            for (token, count) in plan {
                for _ in 0..<count {
                    group.addTask { (token, await client.send(message(token: token), to: MessageTarget(.token, token))) }
                }
            }
            var results: [String: [FCMClient.SendResult]] = [:]
            for await (token, result) in group { results[token, default: []].append(result) }
            return results
        }
    }

    /// Sends to each token once, `inFlight` at a time: a steady flow, so that a connection is
    /// retired while the client is opening streams on it.
    static func sendFlowing(_ client: FCMClient, _ tokens: [String], inFlight: Int) async -> [FCMClient.SendResult] {
        await withTaskGroup(of: FCMClient.SendResult.self) { group in
            var results: [FCMClient.SendResult] = []
            for (i, token) in tokens.enumerated() {
                if i >= inFlight, let result = await group.next() { results.append(result) }
                group.addTask { await client.send(message(token: token), to: MessageTarget(.token, token)) }
            }
            for await result in group { results.append(result) }
            return results
        }
    }

    /// Sends to new devices one after another until cancelled, like the rest of a worker's traffic.
    static func trickle(_ client: FCMClient, prefix: String) -> Task<[FCMClient.SendResult], Never> {
        Task {
            var results: [FCMClient.SendResult] = []
            while !Task.isCancelled {
                let token = "\(prefix)-\(results.count)"
                results.append(await client.send(message(token: token), to: MessageTarget(.token, token)))
                try? await Task.sleep(for: .milliseconds(20))
            }
            return results
        }
    }

    @Test(
        "one chatty device over its quota is backed off alone: every other device is delivered meanwhile, nothing pauses the project",
        arguments: [false, true])
    func deviceQuota(opaque: Bool) async throws {
        var faults = EmulatorFaults()
        faults.quotas.device = .init(limit: 2, window: .seconds(1))
        faults.quotas.opaque = opaque  // with no hint in the answer, the client tells by who else gets through
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client {
            $0.retry.quotaPause = .seconds(30)  // a project pause would outlast the test's patience
            $0.retry.maxBackoff = .milliseconds(500)
        }
        try await client.warmUp()
        let quiet = Self.trickle(client, prefix: "quiet")
        #expect(await eventually { !f.emulator.messages.isEmpty })  // others are getting through
        let chatty = await Self.sendAll(client, [("chatty", 8)])["chatty"] ?? []
        quiet.cancel()
        let quietResults = await quiet.value
        #expect(chatty.count == 8 && chatty.allSatisfy { (try? $0.outcome.get()) != nil }, "every chatty send delivered in the end")
        #expect(chatty.contains { $0.quotaRefusals.contains(.device) })
        #expect(!(chatty + quietResults).contains { $0.quotaRefusals.contains(.project) })
        #expect(client.quotaPausedUntil == nil)
        #expect(quietResults.allSatisfy { (try? $0.outcome.get()) != nil && $0.attempts == 1 }, "no other device waited or was refused")
        // Other devices were delivered while the chatty one was held.
        let attempts = f.emulator.attempts
        let firstRefusal = try #require(attempts.first { $0.token == "chatty" && $0.status == 429 }?.time)
        let lastChatty = try #require(attempts.filter { $0.token == "chatty" && $0.status == 200 }.map(\.time).max())
        #expect(attempts.contains { $0.token?.hasPrefix("quiet-") == true && $0.time > firstRefusal && $0.time < lastChatty })
        await client.shutdown()
        await f.stop()
    }

    @Test("a topic over its quota waits at least the quota pause, alone")
    func topicQuota() async throws {
        var faults = EmulatorFaults()
        // 10 s: the second send must land in the first one's window even on a loaded machine (a
        // full CI run once stalled more than 3 s between them, and the second was accepted).
        faults.quotas.topic = .init(limit: 1, window: .seconds(10))
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client { $0.retry.quotaPause = .seconds(1) }
        let news = Array(#"{"android":{"notification":{"body_loc_key":"k"}},"topic":"news"}"#.utf8)
        _ = await client.send(news, to: MessageTarget(.topic, "news"))
        let second = await client.send(news, to: MessageTarget(.topic, "news"))
        #expect((try? second.outcome.get()) != nil)
        #expect(!second.quotaRefusals.isEmpty && second.quotaRefusals.allSatisfy { $0 == .topic }, "\(second.quotaRefusals)")
        let ok = await client.send(message(token: "someone"), to: MessageTarget(.token, "someone"))
        #expect(ok.attempts == 1 && ok.quotaRefusals.isEmpty)
        // After each refusal, the topic's next attempt came no sooner than the 1 s pause.
        let topicAttempts = f.emulator.attempts.filter { $0.token == nil }
        for (refused, next) in zip(topicAttempts, topicAttempts.dropFirst()) where refused.status == 429 {
            #expect(next.time - refused.time >= 1.0, "the topic's retry came \(next.time - refused.time) s after its refusal")
        }
        #expect(topicAttempts.contains { $0.status == 429 })
        await client.shutdown()
        await f.stop()
    }

    @Test("the project's quota (FCM's RESOURCE_EXHAUSTED with SendsPerMinutePerProject) pauses every send")
    func projectQuota() async throws {
        var faults = EmulatorFaults()
        faults.quotas.project = .init(limit: 3, window: .milliseconds(500))
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client { $0.retry.quotaPause = .milliseconds(600) }
        let results = await Self.sendAll(client, (0..<6).map { ("p-\($0)", 1) })
        #expect(results.values.joined().allSatisfy { (try? $0.outcome.get()) != nil })
        let refusals = results.values.joined().flatMap(\.quotaRefusals)
        #expect(!refusals.isEmpty && refusals.allSatisfy { $0 == .project }, "\(refusals)")
        let attempts = f.emulator.attempts
        let firstRefusal = try #require(attempts.first { $0.status == 429 }?.time)
        for later in attempts where later.status == 200 && later.time > firstRefusal {
            #expect(later.time - firstRefusal >= 0.6, "sent \(later.time - firstRefusal) s into a 0.6 s pause")
        }
        await client.shutdown()
        await f.stop()
    }

    @Test("an outage longer than the whole retry budget loses nothing: waiting on FCM is not counted against it")
    func outageOutlastsBudget() async throws {
        let f = try await EmulatorFixture.start()
        let client = try f.client {
            $0.retry.maxBackoff = .milliseconds(100)
            $0.retry.budget = .seconds(1)
        }
        try await client.warmUp()
        var outage = EmulatorFaults()
        outage.rate = .init(status: 503, probability: 1)
        f.emulator.setFaults(outage)
        async let sends = Self.sendAll(client, (0..<20).map { ("o-\($0)", 1) })
        // The outage lasts until the client has waited on FCM for twice the budget and a message
        // has been tried more often than the old fixed 8 times (however slow the machine is).
        let outageLongEnough = await eventually {
            let waited = client.availability.waiting(at: .now).map { $0 >= .seconds(2) } ?? false
            let tries = Dictionary(grouping: f.emulator.attempts, by: \.token).values.map(\.count).max() ?? 0
            return waited && tries > 8
        }
        #expect(outageLongEnough, "the client knows it is waiting on FCM, and keeps trying")
        f.emulator.setFaults(EmulatorFaults())
        let results = await sends
        let failed = results.values.joined().compactMap { r -> String? in
            if case .failure(let e) = r.outcome { "\(e) after \(r.attempts) attempts" } else { nil }
        }
        #expect(failed.isEmpty, "all delivered after a 3 s outage with a 1 s budget: \(failed.prefix(3))")
        #expect(results.values.joined().contains { $0.attempts > 8 }, "more attempts than the old fixed 8")
        #expect(client.availability.waiting(at: .now) == nil)
        await client.shutdown()
        await f.stop()
    }

    @Test("a message FCM keeps failing while it answers everyone else is given up when its budget runs out", .timeLimit(.minutes(1)))
    func budgetWhileFCMAnswers() async throws {
        var faults = EmulatorFaults()
        faults.tokenPrefixes = ["doomed-": "INTERNAL"]
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client {
            $0.retry.maxBackoff = .milliseconds(100)
            $0.retry.budget = .seconds(3)
        }
        try await client.warmUp()  // the token exchange is not part of the doomed send's budget
        let others = Self.trickle(client, prefix: "fine")
        let started = ContinuousClock.now
        let result = await client.send(message(token: "doomed-1"), to: MessageTarget(.token, "doomed-1"))
        let tried = ContinuousClock.now - started
        others.cancel()
        _ = await others.value
        guard case .failure(let error) = result.outcome else {
            Issue.record("delivered?")
            return
        }
        #expect(error.code == .internal && error.isRetryable)
        // Retried before giving up: on a quiet machine about 20 attempts; beside the full suite on
        // two cores an attempt took over a second (2 in a 2 s budget, 2026-11-30), so only a retry
        // at all is asserted.
        #expect(result.attempts >= 2)
        #expect(f.emulator.attempts.filter { $0.token == "doomed-1" }.count == result.attempts)
        // Given up (the time limit above would catch it being held like an outage), after trying
        // for a good part of the budget. Timed from the send's start, as the budget is: on a
        // starved machine the first attempt can reach the emulator late (CI: 1 s after it).
        #expect(tried >= .seconds(1), "tried for \(tried) of a 3 s budget")
        await client.shutdown()
        await f.stop()
    }

    enum ConnectionFault: String, CaseIterable, Sendable {
        /// RST_STREAM REFUSED_STREAM: not processed (RFC 9113 §8.7).
        case refusedStream
        /// GOAWAY, then close once the open streams are answered: nothing is cut (§6.8).
        case gracefulGoAway
        /// GOAWAY, then close at once: the answers still on the connection are lost.
        case droppedConnection
    }

    /// A refused stream loses nothing and costs no attempt: libcurl sends a refused request
    /// again on a fresh connection. A graceful GOAWAY cuts nothing and refuses nothing: every
    /// request on the retired connection is answered, FCM sees each send once, and none costs an
    /// attempt. A dropped connection loses its answers: those sends are attempted again, and
    /// delivered at least once, as FCM's users see it. With retirements the sends flow 20 at a
    /// time, so each retirement (every 25th send) meets a connection the client is opening
    /// streams on; the other faults get all 200 at once.
    @Test("streams FCM refuses and connections it retires or drops lose nothing", arguments: ConnectionFault.allCases)
    func connectionFaults(fault: ConnectionFault) async throws {
        var faults = EmulatorFaults()
        switch fault {
        case .refusedStream: faults.refuseStreamEvery = 4
        case .gracefulGoAway: faults.goAwayEvery = 25
        case .droppedConnection: faults.dropConnectionEvery = 25
        }
        faults.latencyMilliseconds = 20  // answers overlap, so a closing connection has some in flight
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client()
        let tokens = (0..<200).map { "g-\($0)" }
        let results =
            fault == .gracefulGoAway
            ? await Self.sendFlowing(client, tokens, inFlight: 20) : Array(await Self.sendAll(client, tokens.map { ($0, 1) }).values.joined())
        #expect(results.count == tokens.count && results.allSatisfy { (try? $0.outcome.get()) != nil })
        let delivered = f.emulator.messages.compactMap(\.token)
        #expect(Set(delivered) == Set(tokens))
        switch fault {
        case .refusedStream:
            #expect(delivered.count == tokens.count, "delivered once")
            #expect(results.allSatisfy { $0.attempts == 1 }, "no send needed a second attempt")
        case .gracefulGoAway:
            #expect(delivered.count == tokens.count, "delivered once")
            #expect(f.emulator.attempts.count == tokens.count, "FCM saw each send once: none was cut")
            // The final GOAWAY names every stream the client opened (docs/emulator.md): none is
            // refused, so none fails. (libcurl 7.88 fails a stream refused on a retiring
            // connection, when it is the connection's last, instead of sending it again.)
            #expect(results.allSatisfy { $0.attempts == 1 }, "no send needed a second attempt")
            // 20 in flight, fewer than 25: each retirement meets a connection not yet retiring.
            #expect(client.connections.opened >= tokens.count / 25, "each retirement moved the client on (\(client.connections.opened) opened)")
        case .droppedConnection:
            break
        }
        #expect(client.connections.opened > 1, "the client moved to new connections (\(client.connections.opened) opened)")
        await client.shutdown()
        await f.stop()
    }

    /// `fcm.max_sends_per_second` through the whole client: the sends FCM sees average no
    /// more than the cap, whatever the answer time (``RateScheduleTests`` checks every window of
    /// the schedule itself, which a loaded machine cannot blur).
    @Test("a rate cap holds end to end, at any answer time", arguments: [0, 100])
    func rateCap(latency: Int) async throws {
        var faults = EmulatorFaults()
        faults.latencyMilliseconds = latency
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client { $0.maxSendsPerSecond = 100 }
        try await client.warmUp()
        let results = await Self.sendAll(client, (0..<300).map { ("c-\($0)", 1) })
        #expect(results.values.joined().allSatisfy { (try? $0.outcome.get()) != nil })
        let rate = try Self.averageRate(f.emulator, sends: 300)
        #expect(rate <= 105, "\(rate) sends a second on average, capped at 100")
        await client.shutdown()
        await f.stop()
    }

    /// The project share (`fcm.project_sends_per_second` split by partitions) set at run time:
    /// the lower of it and the configured cap holds, from the next send on.
    @Test("a project share below the configured cap holds end to end; without it the configured cap is back")
    func projectShare() async throws {
        let f = try await EmulatorFixture.start()
        let client = try f.client { $0.maxSendsPerSecond = 400 }
        try await client.warmUp()
        client.setProjectShare(sendsPerSecond: 50)
        #expect(client.maxSendsPerSecond == 50)
        let results = await Self.sendAll(client, (0..<100).map { ("p-\($0)", 1) })
        #expect(results.values.joined().allSatisfy { (try? $0.outcome.get()) != nil })
        let rate = try Self.averageRate(f.emulator, sends: 100)
        #expect(rate <= 52.5, "\(rate) sends a second on average, the share is 50")
        client.setProjectShare(sendsPerSecond: 1_000)
        #expect(client.maxSendsPerSecond == 400, "the configured cap is lower than this share")
        client.setProjectShare(sendsPerSecond: nil)
        #expect(client.maxSendsPerSecond == 400)
        await client.shutdown()
        await f.stop()
    }

    /// Sends a second as the emulator saw them arrive, from the first to the last of `sends`.
    static func averageRate(_ emulator: FCMEmulator, sends: Int) throws -> Double {
        let times = emulator.attempts.map(\.time).sorted()
        try #require(times.count == sends)
        return Double(times.count - 1) / (times.last! - times.first!)
    }

    @Test("like FCM's front end, the emulator allows 100 streams per connection; more sends wait or open another")
    func hundredStreams() async throws {
        var faults = EmulatorFaults()
        faults.latencyMilliseconds = 300
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client {
            $0.maxConnections = 1
            $0.threads = 1
            $0.maxStreams = 300
            $0.concurrency.floor = 250
        }
        try await client.warmUp()
        let results = await Self.sendAll(client, (0..<250).map { ("s-\($0)", 1) })
        #expect(results.values.joined().allSatisfy { (try? $0.outcome.get()) != nil })
        #expect(f.emulator.maxConcurrentStreams <= 100)
        #expect(f.emulator.maxConcurrentStreams >= 50, "the test did fill the connection (\(f.emulator.maxConcurrentStreams))")
        await client.shutdown()
        await f.stop()
    }
}
