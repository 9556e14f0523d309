import DeviceRegistry
import TestSupport

/// Runs `follower` in a child task while `body` runs, then cancels it and waits for it to end.
/// Throws what `run()` threw, if it failed.
func following<T: Sendable>(_ follower: RegistryFollower, _ body: @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await follower.run() }
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        group.cancelAll()
        try await group.waitForAll()
        return try result.get()
    }
}

/// `condition` on the follower's status, waited for at most `limit` (a bound so that a broken
/// follower fails the test instead of hanging it; no speed is asserted).
func eventually(
    _ follower: RegistryFollower, limit: Duration = .seconds(60), _ condition: @escaping @Sendable (RegistryFollower.Status) -> Bool
) async throws {
    let met = await withTaskGroup(of: Bool.self) { group in
        group.addTask { await follower.wait(until: condition) }
        group.addTask {
            try? await Task.sleep(for: limit)
            return false
        }
        let first = await group.next()!
        group.cancelAll()
        return first
    }
    guard met else { throw TestSupportError("the follower never reached the condition; status: \(follower.status)") }
}

/// Waits (at most `limit`) until the follower has caught up.
func caughtUp(_ follower: RegistryFollower, limit: Duration = .seconds(60)) async throws {
    try await eventually(follower, limit: limit) { $0.caughtUp }
}
