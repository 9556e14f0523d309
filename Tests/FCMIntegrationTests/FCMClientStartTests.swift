import FCM
import FCMEmulator
import Synchronization
import Testing

/// ``FCMClient/start(_:to:validateOnly:then:)``: a send begun without a task waiting on it ends
/// as ``FCMClient/send(_:to:validateOnly:)`` would have, against the emulator; and it refuses,
/// rather than waits, when a send would have to wait first.
@Suite("FCM client: sends begun without a task", .serialized)
struct FCMClientStartTests {
    /// How a begun send stood after its first attempt, or why it was not begun.
    static func begin(_ client: FCMClient, token: String) async -> Result<FCMClient.FirstAttempt, FCMClient.StartRefusal> {
        await withCheckedContinuation { continuation in
            let started = client.start(message(token: token), to: MessageTarget(.token, token)) { first in
                continuation.resume(returning: .success(first))
            }
            if case .failure(let refusal) = started { continuation.resume(returning: .failure(refusal)) }
        }
    }

    /// The emulator, answering every send after `milliseconds`.
    static func emulator(answeringAfter milliseconds: Int) async throws -> EmulatorFixture {
        var faults = EmulatorFaults()
        faults.latencyMilliseconds = milliseconds
        return try await EmulatorFixture.start(faults: faults)
    }

    /// The emulator answering the first send 503, and a client with its access token.
    static func failingOnce() async throws -> (EmulatorFixture, FCMClient) {
        var faults = EmulatorFaults()
        faults.burst = .init(status: 503, count: 1)
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client()
        try await client.warmUp()
        return (f, client)
    }

    @Test("an acknowledged send ends in its callback with FCM's message name; a 503 leaves a retry for a task, which delivers it")
    func endsAsSendWould() async throws {
        let (f, client) = try await Self.failingOnce()

        guard case .success(.unfinished(let rest)) = await Self.begin(client, token: "first") else {
            Issue.record("a 503 should leave the send unfinished")
            return
        }
        #expect(f.emulator.messages.isEmpty)
        let retried = await rest()
        #expect((try? retried.outcome.get())?.hasPrefix("projects/demo-project/messages/") == true)
        #expect(retried.attempts == 2)

        guard case .success(.finished(let result)) = await Self.begin(client, token: "second") else {
            Issue.record("an acknowledged send should end in its callback")
            return
        }
        #expect((try? result.outcome.get())?.hasPrefix("projects/demo-project/messages/") == true)
        #expect(result.attempts == 1)
        #expect(f.emulator.messages.count == 2)
        await client.shutdown()
        await f.stop()
    }

    @Test("asked to, a send keeps each attempt (a traced event's send spans): the 503, then the acknowledgement; otherwise none")
    func attemptLog() async throws {
        let (f, client) = try await Self.failingOnce()
        let first = await withCheckedContinuation { continuation in
            let started = client.start(message(token: "logged"), to: MessageTarget(.token, "logged"), recordingAttempts: true) {
                continuation.resume(returning: $0)
            }
            if case .failure = started { Issue.record("not begun") }
        }
        guard case .unfinished(let rest) = first else {
            Issue.record("a 503 should leave the send unfinished")
            return
        }
        let result = await rest()
        let log = try #require(result.attemptLog)
        #expect(log.count == 2 && result.attempts == 2)
        #expect(log.first.map { if case .failure(let e) = $0.outcome { e.httpStatus == 503 } else { false } } == true)
        #expect((try? log.last?.outcome.get())?.hasPrefix("projects/demo-project/messages/") == true)
        #expect(log.allSatisfy { $0.started <= $0.ended } && log[0].ended <= log[1].started)
        let plain = await client.send(message(token: "unlogged"), to: MessageTarget(.token, "unlogged"))
        #expect(plain.attemptLog == nil, "not asked: nothing kept")
        await client.shutdown()
        await f.stop()
    }

    @Test("a permanent refusal ends in the callback, classified, with no retry")
    func permanentFailure() async throws {
        var faults = EmulatorFaults()
        faults.tokenPrefixes["dead-"] = "UNREGISTERED"
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client()
        try await client.warmUp()
        guard case .success(.finished(let result)) = await Self.begin(client, token: "dead-1"),
            case .failure(let error) = result.outcome
        else {
            Issue.record("UNREGISTERED should end the send in its callback")
            return
        }
        #expect(error.code == .unregistered && result.attempts == 1)
        await client.shutdown()
        await f.stop()
    }

    @Test("it refuses instead of waiting: with no access token yet (mustWait), with every slot taken (full) until waitForRoom returns")
    func refusals() async throws {
        let f = try await Self.emulator(answeringAfter: 300)
        let client = try f.client {
            $0.concurrency.floor = 1
            $0.concurrency.ceiling = 1
        }
        guard case .failure(.mustWait) = await Self.begin(client, token: "early") else {
            Issue.record("with no token cached, start should refuse")
            return
        }
        try await client.warmUp()

        let firstEnded = Mutex(false)
        let clock = ContinuousClock()
        let firstStarted = clock.now
        let first = client.start(message(token: "a"), to: MessageTarget(.token, "a")) { _ in firstEnded.withLock { $0 = true } }
        #expect((try? first.get()) != nil)
        guard case .failure(.full) = await Self.begin(client, token: "b") else {
            Issue.record("with its one slot taken, start should refuse as full")
            return
        }
        await client.waitForRoom()
        // Room comes with the first send's answer, which the emulator gives after 300 ms at the
        // earliest (a lower bound set by the server, never a speed test).
        let waited = clock.now - firstStarted
        #expect(waited >= .milliseconds(290), "room came before FCM answered the first send: \(waited)")
        // Its slot is freed just before its callback runs, on the client's thread.
        for _ in 0..<500 where !firstEnded.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(firstEnded.withLock { $0 }, "the first send ended in its callback")
        guard case .success(.finished(let second)) = await Self.begin(client, token: "b") else {
            Issue.record("with room again, the send should go")
            return
        }
        #expect((try? second.outcome.get()) != nil)
        #expect(Set(f.emulator.messages.compactMap(\.token)) == ["a", "b"])
        await client.shutdown()
        await f.stop()
    }

    @Test("with a stale access token (under 5 min left) sends still begin at once, without waiting, while it is refreshed")
    func staleToken() async throws {
        // Every token the emulator issues is stale from the start. Before, `start` refused each
        // send with mustWait until a refresh came back, and the refresh gave another stale one.
        let f = try await EmulatorFixture.start(tokenLifetime: .seconds(240))
        let client = try f.client()
        try await client.warmUp()
        for i in 0..<20 {
            guard case .success(.finished(let result)) = await Self.begin(client, token: "stale-\(i)") else {
                Issue.record("send \(i) with a stale token should begin at once and be acknowledged")
                return
            }
            #expect((try? result.outcome.get()) != nil)
        }
        #expect(f.emulator.messages.count == 20)
        #expect(client.tokenRefreshes >= 2, "looking at a stale token starts its refresh")
        #expect(client.hasAccessToken && client.accessTokenTimeLeft > .seconds(60))
        await client.shutdown()
        await f.stop()
    }

    @Test("a send under way when the client shuts down ends in its callback as a shutdown, not a delivery")
    func shutdownEndsIt() async throws {
        let f = try await Self.emulator(answeringAfter: 5_000)
        let client = try f.client()
        try await client.warmUp()
        let ended = Mutex<FCMClient.FirstAttempt?>(nil)
        let started = client.start(message(token: "slow"), to: MessageTarget(.token, "slow")) { first in ended.withLock { $0 = first } }
        #expect((try? started.get()) != nil)
        // The client's threads fail what is in flight before they stop, and shutdown waits for them.
        await client.shutdown()
        guard case .finished(let result)? = ended.withLock({ $0 }), case .failure(let error) = result.outcome else {
            Issue.record("the send should end, failed, in its callback")
            return
        }
        #expect(error.isShutdown)
        await f.stop()
    }
}
