import FCM
import FCMEmulator
import Foundation
import JSON
import TestSupport
import Testing

/// An emulator and a client of it, with a fresh service account and CA.
struct EmulatorFixture {
    let emulator: FCMEmulator
    let account: ServiceAccount
    let caFile: String
    /// The key and CA files; removed with the fixture, or at ``stop()``.
    let folder: TemporaryFolder
    var dir: URL { folder.url }

    /// - Parameter accounts: more service accounts the emulator trusts (other projects').
    static func start(
        faults: EmulatorFaults = EmulatorFaults(), tokenLifetime: Duration = .seconds(3600), accounts: [EmulatorAccount] = []
    ) async throws -> EmulatorFixture {
        let folder = try TemporaryFolder()
        let dir = folder.url
        let (pem, _) = try await offPool { try TestKeys.rsaKey(in: dir) }
        let email = "pushbridge@demo-project.iam.gserviceaccount.com"
        var configuration = FCMEmulator.Configuration(accounts: [email: pem])
        for account in accounts { configuration.accounts[account.email] = account.privateKeyPEM }
        configuration.faults = faults
        configuration.tokenLifetime = tokenLifetime
        let emulator = try await FCMEmulator.start(configuration)
        let caFile = dir.appendingPathComponent("ca.pem").path
        try emulator.tls.caPEM.write(toFile: caFile, atomically: true, encoding: .utf8)
        let account = ServiceAccount(projectID: "demo-project", clientEmail: email, privateKeyPEM: pem, tokenURI: emulator.tokenURI)
        return EmulatorFixture(emulator: emulator, account: account, caFile: caFile, folder: folder)
    }

    func client(_ configure: (inout FCMClient.Configuration) -> Void = { _ in }) throws -> FCMClient {
        var configuration = FCMClient.Configuration(serviceAccount: account)
        configuration.baseURL = emulator.baseURL
        configuration.caFile = caFile
        configuration.retry.initialBackoff = .milliseconds(20)
        configuration.retry.quotaPause = .milliseconds(300)
        configure(&configuration)
        return try FCMClient(configuration: configuration)
    }

    func stop() async {
        await emulator.stop()
        try? FileManager.default.removeItem(at: dir)
    }
}

func message(token: String, extra: String = "") -> [UInt8] {
    Array(#"{"android":{"notification":{"body_loc_args":["3","Bob"],"body_loc_key":"new_message_body"}\#(extra)},"token":"\#(token)"}"#.utf8)
}

@Suite("FCM client against the emulator", .serialized)
struct FCMClientTests {
    @Test("a send arrives exactly as sent, with one token exchange, and returns FCM's message name")
    func golden() async throws {
        let f = try await EmulatorFixture.start()
        let client = try f.client()
        let body = message(token: "tok-1")
        let result = await client.send(body)
        let name = try result.outcome.get()
        #expect(name.hasPrefix("projects/demo-project/messages/0:"))
        #expect(result.attempts == 1)
        let recorded = try #require(f.emulator.messages.first)
        #expect(JSONWriter.write(recorded.message) == body)
        #expect(recorded.token == "tok-1" && recorded.project == "demo-project" && !recorded.validateOnly)
        #expect(f.emulator.tokensIssued == 1)
        // validate_only: answered with FCM's fake name, recorded as a dry run
        #expect(try await client.send(body, validateOnly: true).outcome.get() == "projects/demo-project/messages/fake_message_id")
        #expect(f.emulator.messages.last?.validateOnly == true)
        await client.shutdown()
        await f.stop()
    }

    @Test(
        "each FCM error class, driven through the emulator",
        arguments: [
            ("dead-1", "UNREGISTERED", FCMError.Kind.tokenDead, 404),
            ("alien-1", "SENDER_ID_MISMATCH", .tokenDead, 403),
            ("bad-1", "INVALID_ARGUMENT", .tokenDead, 400),
            ("3p-1", "THIRD_PARTY_AUTH_ERROR", .permanent, 401),
        ])
    func tokenErrors(token: String, code: String, kind: FCMError.Kind, status: Int) async throws {
        var faults = EmulatorFaults()
        faults.tokenPrefixes = ["dead-": "UNREGISTERED", "alien-": "SENDER_ID_MISMATCH", "bad-": "INVALID_ARGUMENT", "3p-": "THIRD_PARTY_AUTH_ERROR"]
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client()
        let result = await client.send(message(token: token))
        guard case .failure(let error) = result.outcome else {
            Issue.record("expected \(code)")
            return
        }
        #expect(error.code == FCMError.Code(fcm: code) && error.kind == kind && error.httpStatus == status)
        #expect(result.attempts == 1, "not retried")
        #expect(f.emulator.messages.isEmpty)
        await client.shutdown()
        await f.stop()
    }

    @Test("an invalid payload is INVALID_ARGUMENT about the payload: permanent, with the field")
    func invalidPayload() async throws {
        let f = try await EmulatorFixture.start()
        let client = try f.client()
        let result = await client.send(message(token: "t", extra: #","ttl":"1h""#))
        guard case .failure(let error) = result.outcome else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .invalidArgument && error.kind == .permanent)
        #expect(error.fieldViolations.map(\.field) == ["message.android.ttl"])
        await client.shutdown()
        await f.stop()
    }

    @Test(
        "503 and 500 bursts are retried until delivered; retries stop at maxAttempts",
        arguments: [(503, 2, 8, true), (500, 1, 8, true), (503, 10, 3, false)])
    func retryable(status: Int, failures: Int, maxAttempts: Int, delivered: Bool) async throws {
        var faults = EmulatorFaults()
        faults.burst = .init(status: status, count: failures)
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client { $0.retry.maxAttempts = maxAttempts }
        let result = await client.send(message(token: "t"))
        if delivered {
            #expect((try? result.outcome.get()) != nil)
            #expect(result.attempts == failures + 1)
            #expect(f.emulator.messages.count == 1)
        } else {
            guard case .failure(let error) = result.outcome else {
                Issue.record("expected a failure")
                return
            }
            #expect(error.code == .unavailable && error.kind == .retryable && result.attempts == maxAttempts)
        }
        await client.shutdown()
        await f.stop()
    }

    @Test("Retry-After is honoured: no retry arrives before it")
    func retryAfter() async throws {
        var faults = EmulatorFaults()
        faults.burst = .init(status: 503, count: 1, retryAfterSeconds: 1)
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client()
        let result = await client.send(message(token: "t"))
        #expect(result.attempts == 2)
        let times = f.emulator.attempts.map(\.time)
        try #require(times.count == 2)
        #expect(times[1] - times[0] >= 1.0, "retry came \(times[1] - times[0]) s after a Retry-After of 1 s")
        await client.shutdown()
        await f.stop()
    }

    @Test("QUOTA_EXCEEDED pauses every send of the project, not just the one that saw it")
    func quotaPausesAll() async throws {
        var faults = EmulatorFaults()
        faults.burst = .init(status: 429, count: 1)
        let f = try await EmulatorFixture.start(faults: faults)
        let client = try f.client { $0.retry.quotaPause = .seconds(1) }
        try await client.warmUp()
        async let first = client.send(message(token: "first"))
        // Starts once the 429 has been answered.
        while f.emulator.attempts.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(100))
        let second = await client.send(message(token: "second"))
        let firstResult = await first
        #expect(firstResult.attempts == 2 && second.attempts == 1)
        let attempts = f.emulator.attempts
        let quota = try #require(attempts.first { $0.code == "QUOTA_EXCEEDED" })
        for later in attempts where later.status == 200 {
            #expect(later.time - quota.time >= 1.0, "\(later.token ?? "") sent \(later.time - quota.time) s into a 1 s pause")
        }
        await client.shutdown()
        await f.stop()
    }

    @Test("200 concurrent sends share one token exchange")
    func oneRefresh() async throws {
        let f = try await EmulatorFixture.start()
        let client = try f.client()
        let ok = await withTaskGroup(of: Bool.self) { group in
            for i in 0..<200 { group.addTask { (try? await client.send(message(token: "t\(i)")).outcome.get()) != nil } }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(ok == 200)
        #expect(f.emulator.tokensIssued == 1)
        #expect(client.tokenRefreshes == 1)
        await client.shutdown()
        await f.stop()
    }

    @Test("a revoked access token (401) is refreshed once and the send retried")
    func refreshOn401() async throws {
        let f = try await EmulatorFixture.start()
        let client = try f.client()
        _ = await client.send(message(token: "a"))
        f.emulator.revokeTokens()
        let result = await client.send(message(token: "b"))
        #expect((try? result.outcome.get()) != nil)
        #expect(result.attempts == 2)
        #expect(f.emulator.tokensIssued == 2)
        #expect(f.emulator.attempts.map(\.status) == [200, 401, 200])
        await client.shutdown()
        await f.stop()
    }

    @Test("a service account the token endpoint refuses is a configuration error, not the message's")
    func refusedAccount() async throws {
        let f = try await EmulatorFixture.start()
        let other = try await offPool { try TestKeys.rsaKey(in: f.dir) }  // a key the emulator does not know
        var account = f.account
        account.privateKeyPEM = other.privatePEM
        var configuration = FCMClient.Configuration(serviceAccount: account)
        configuration.baseURL = f.emulator.baseURL
        configuration.caFile = f.caFile
        let client = try FCMClient(configuration: configuration)
        let result = await client.send(message(token: "t"))
        guard case .failure(let error) = result.outcome else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.kind == .configuration && error.code == .tokenExchange)
        #expect(error.message.contains("Invalid JWT Signature"))
        #expect(!error.message.contains("PRIVATE KEY"))
        await client.shutdown()
        await f.stop()
    }

    @Test("TLS to a server whose CA is not trusted fails with a clear error")
    func unknownCA() async throws {
        let f = try await EmulatorFixture.start()
        let stranger = try EmulatorTLS.generate()
        let otherCA = f.dir.appendingPathComponent("other-ca.pem").path
        try stranger.caPEM.write(toFile: otherCA, atomically: true, encoding: .utf8)
        let client = try f.client { $0.caFile = otherCA }
        let result = await client.send(message(token: "t"))
        guard case .failure(let error) = result.outcome else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .tls && error.kind == .configuration)
        #expect(error.message.contains("CA"), "\(error.message)")
        #expect(result.attempts == 1)
        await client.shutdown()
        await f.stop()
    }
}
