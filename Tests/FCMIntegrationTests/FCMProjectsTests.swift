import FCM
import FCMEmulator
import Foundation
import TestSupport
import Testing

/// Several Firebase projects (``FCMProjects``) against the emulator, which, like FCM, keeps each
/// project's quota apart and refuses a project's sends made with another project's service account.
@Suite("FCM projects: one client per project", .serialized)
struct FCMProjectsTests {
    @Test(
        "a project's sends with another project's service account: FCM's 403 PERMISSION_DENIED with no FcmError, a configuration error, not the message's"
    )
    func wrongProject() async throws {
        let f = try await EmulatorFixture.start()
        var account = f.account
        account.projectID = "someone-elses-project"  // the URL names it; the token is demo-project's account's
        let client = try f.client { $0.serviceAccount = account }
        let result = await client.send(message(token: "t1"))
        guard case .failure(let error) = result.outcome else {
            Issue.record("accepted: \(result.outcome)")
            return
        }
        #expect(error.code == .permissionDenied && error.httpStatus == 403)
        #expect(error.kind == .configuration, "no event can succeed until the operator fixes the account: stop, do not dead-letter")
        #expect(result.attempts == 1)
        #expect(f.emulator.messages.isEmpty)
        await client.shutdown()
        await f.stop()
    }

    @Test("each project's quota pause holds its own sends only; the default project takes messages that name none")
    func separatePauses() async throws {
        var faults = EmulatorFaults()
        faults.quotas.project = .init(limit: 2, window: .seconds(30))
        let driverAccount = try EmulatorAccount(projectID: "driver-project", name: "pushbridge")
        let f = try await EmulatorFixture.start(faults: faults, accounts: [driverAccount])
        let consumer = try f.client { $0.retry.quotaPause = .seconds(60) }
        let driver = try f.client {
            $0.serviceAccount = ServiceAccount(
                projectID: driverAccount.projectID, clientEmail: driverAccount.email, privateKeyPEM: driverAccount.privateKeyPEM,
                tokenURI: f.emulator.tokenURI)
            $0.retry.quotaPause = .seconds(60)
        }
        let projects = try FCMProjects(["consumer": consumer, "driver": driver], default: "consumer")
        #expect(projects.client(nil) === consumer && projects.client("driver") === driver && projects.client("rider") == nil)

        // The driver project's third send in the window is its quota's: it pauses the driver's sends.
        for i in 0..<2 { #expect(try await driver.send(message(token: "d\(i)")).outcome.get().hasPrefix("projects/driver-project/")) }
        let third = Task { await driver.send(message(token: "d2")) }
        let deadline = ContinuousClock.now + .seconds(30)
        while driver.quotaPausedUntil == nil, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(driver.quotaPausedUntil != nil, "the driver project paused")
        // Meanwhile the consumer project's sends go: its own quota, its own pause.
        for i in 0..<2 { #expect(try await consumer.send(message(token: "c\(i)")).outcome.get().hasPrefix("projects/demo-project/")) }
        #expect(consumer.quotaPausedUntil == nil && driver.quotaPausedUntil != nil)
        #expect(!f.emulator.messages.contains { $0.token == "d2" }, "still held by the driver project's pause")
        third.cancel()
        _ = await third.value
        await projects.shutdown()
        await f.stop()
    }
}
