import FCM
import FCMEmulator
import Foundation
import TestSupport
import Testing

/// A send's deadline (a capped push's send limit, docs/rules-state.md): no attempt starts at or
/// after it, and an attempt's request ends at it at the latest. Checked by what the emulator
/// received and when, never by how fast the client was.
@Suite("FCM client: a send's deadline", .serialized)
struct SendDeadlineTests {
    /// The send's failure; nil if it succeeded.
    static func failure(of result: FCMClient.SendResult) -> FCMError? {
        guard case .failure(let error) = result.outcome else { return nil }
        return error
    }

    @Test("a send whose deadline has passed makes no attempt, and says why")
    func passed() async throws {
        let f = try await EmulatorFixture.start()
        defer { Task { await f.stop() } }
        let client = try f.client()
        try await client.warmUp()
        let result = await client.send(message(token: "late"), to: MessageTarget(.token, "late"), deadline: .now - .seconds(1))
        let error = try #require(Self.failure(of: result), "sent after its deadline")
        #expect(error.code == .deadline)
        #expect(error.kind == .retryable && error.httpStatus == nil, "no answer came: the rules count it as maybe delivered")
        #expect(result.attempts == 0)
        #expect(f.emulator.attempts.isEmpty)
    }

    @Test("an outage: the retries stop at the deadline, long before the retry budget, and none arrives after it")
    func outage() async throws {
        var faults = EmulatorFaults()
        faults.rate = .init(status: 503, probability: 1)
        let f = try await EmulatorFixture.start(faults: faults)
        defer { Task { await f.stop() } }
        let client = try f.client {
            $0.retry.maxBackoff = .milliseconds(100)
            $0.retry.budget = .seconds(600)
        }
        try await client.warmUp()
        let started = ContinuousClock.now
        let result = await client.send(message(token: "down"), to: MessageTarget(.token, "down"), deadline: started + .seconds(2))
        let returned = ContinuousClock.now
        let error = try #require(Self.failure(of: result), "delivered through a 503 outage")
        #expect(error.code == .deadline)
        #expect(error.message.contains("the last: FCM"), "it names the last attempt's failure: \(error.message)")
        #expect(result.attempts >= 1)
        #expect(returned >= started + .seconds(2), "it kept trying until the deadline")
        #expect(returned < started + .seconds(60), "the deadline, not the 600 s budget, ended it")
        // Nothing more arrives once the send has returned: no attempt was left running.
        let arrived = f.emulator.attempts.count
        try await Task.sleep(for: .milliseconds(500))
        #expect(f.emulator.attempts.count == arrived)
        #expect(arrived <= result.attempts, "an attempt cut at the deadline may not have reached it")
    }

    @Test("an answer that would come after the deadline: the attempt ends at the deadline, unanswered")
    func slowAnswer() async throws {
        var faults = EmulatorFaults()
        faults.latencyMilliseconds = 8_000
        let f = try await EmulatorFixture.start(faults: faults)
        defer { Task { await f.stop() } }
        let client = try f.client()
        try await client.warmUp()
        let started = ContinuousClock.now
        let result = await client.send(message(token: "slow"), to: MessageTarget(.token, "slow"), deadline: started + .seconds(1))
        let returned = ContinuousClock.now
        let error = try #require(Self.failure(of: result), "answered within the deadline?")
        #expect(error.code == .deadline, "\(error)")
        // Cut at the deadline with no answer: a timeout, or, as the connection said nothing
        // meanwhile, a connection closed as dead (which would be retried at once, but not now).
        #expect(["TIMEOUT", "DEAD_CONNECTION"].contains { error.message.contains($0) }, "the attempt ended unanswered: \(error.message)")
        #expect(result.attempts == 1)
        #expect(returned < started + .seconds(8), "it did not wait for the 8 s answer (the request timeout is 30 s)")
    }
}
