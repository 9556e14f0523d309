import FCM
import FCMEmulator
import Foundation
import TestSupport
import Testing

/// A send whose connection goes silent (``SilentRelay`` in front of the emulator): the connection
/// is closed as dead, and the send goes again at once on another, spending neither an attempt
/// nor budget (FCM never answered it, as in an outage).
@Suite("FCM client: sends on a dead connection", .serialized)
struct DeadConnectionRetryTests {
    @Test("a send on a connection that went silent is sent again on a new one, even with a single attempt and no budget allowed")
    func retriedWithoutSpendingTheRetryPolicy() async throws {
        let f = try await EmulatorFixture.start()
        let relay = try await SilentRelay.start(to: f.emulator.port)
        let client = try f.client { c in
            c.baseURL = "https://127.0.0.1:\(relay.port)"
            c.livenessTimeout = .milliseconds(500)
            c.retry.maxAttempts = 1
            c.retry.budget = .zero
        }
        #expect(try await client.send(message(token: "before")).outcome.get().hasPrefix("projects/demo-project/messages/"))
        try await relay.silence()
        let opened = client.connections.opened  // the token endpoint's (not behind the relay) and FCM's

        let result = await client.send(message(token: "during"))
        #expect((try? result.outcome.get()) != nil, "\(result.outcome)")
        #expect(result.attempts == 2)
        #expect(f.emulator.messages.count { $0.token == "during" } == 1)
        #expect(client.connections.opened == opened + 1)
        await client.shutdown()
        await f.stop()
    }

    @Test("while sends wait on a silent connection, the client reports it is waiting on FCM, and stops once FCM answers again")
    func silenceIsWaiting() async throws {
        let f = try await EmulatorFixture.start()
        let relay = try await SilentRelay.start(to: f.emulator.port)
        let client = try f.client { c in
            c.baseURL = "https://127.0.0.1:\(relay.port)"
            c.livenessTimeout = .seconds(3)
        }
        _ = await client.send(message(token: "before"))
        #expect(client.waitingOnFCM(at: .now) == nil)
        try await relay.silence()
        let send = Task { await client.send(message(token: "during")) }
        // Once the send has had no answer for 0.9 s (the liveness timeout, 3 s, has not closed
        // the connection yet), the client says it waits on FCM, and why.
        var seen: (duration: Duration, reason: String)?
        #expect(
            await eventually(timeout: .seconds(20)) {
                seen = client.waitingOnFCM(at: .now)
                return (seen?.duration ?? .zero) >= .milliseconds(900)
            })
        let waiting = try #require(seen)
        #expect(waiting.reason.contains("1 sends in flight and no answer"), "\(waiting.reason)")
        #expect((try? await send.value.outcome.get()) != nil)
        #expect(client.waitingOnFCM(at: .now) == nil)
        await client.shutdown()
        await f.stop()
    }
}
