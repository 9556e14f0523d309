import FCM
import Foundation
import Testing

@Suite("AccessTokenCache")
struct AccessTokenCacheTests {
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func next() -> Int {
            lock.lock()
            defer { lock.unlock() }
            n += 1
            return n
        }
        var value: Int {
            lock.lock()
            defer { lock.unlock() }
            return n
        }
    }

    @Test("200 concurrent callers cause exactly one refresh")
    func singleFlight() async throws {
        let fetches = Counter()
        let cache = AccessTokenCache { () async throws -> AccessToken in
            let n = fetches.next()
            try await Task.sleep(for: .milliseconds(100))  // a slow token endpoint
            return AccessToken(value: "token-\(n)", expiresAt: .now + .seconds(3600))
        }
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<200 { group.addTask { try await cache.token() } }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(fetches.value == 1)
        #expect(Set(tokens) == ["token-1"])
    }

    @Test("a caller cancelled while the refresh runs stops waiting at once; the refresh goes on and serves the others")
    func cancelledWaiter() async throws {
        let release = AsyncStream<Void>.makeStream()
        let cache = AccessTokenCache { () async throws -> AccessToken in
            for await _ in release.stream { break }  // a token endpoint that answers when told
            return AccessToken(value: "token", expiresAt: .now + .seconds(3600))
        }
        let cancelled = Task { try await cache.token() }
        let other = Task { try await cache.token() }
        while cache.refreshCount == 0 { try await Task.sleep(for: .milliseconds(5)) }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        release.continuation.yield()
        #expect(try await other.value == "token")
        #expect(cache.refreshCount == 1)
    }

    @Test("after a 401, many invalidations of the same token cause one refresh")
    func invalidateOnce() async throws {
        let fetches = Counter()
        let cache = AccessTokenCache { AccessToken(value: "token-\(fetches.next())", expiresAt: .now + .seconds(3600)) }
        let first = try await cache.token()
        for _ in 0..<50 { cache.invalidate(first) }
        #expect(try await cache.token() == "token-2")
        cache.invalidate(first)  // a late report about the old token changes nothing
        #expect(try await cache.token() == "token-2")
        #expect(fetches.value == 2)
    }

    @Test("a token within the expiry margin is not used: the next caller waits for a new one")
    func expiredIsNotUsed() async throws {
        let fetches = Counter()
        let cache = AccessTokenCache(refreshMargin: .seconds(300), expiryMargin: .seconds(60)) {
            AccessToken(value: "t\(fetches.next())", expiresAt: .now + .seconds(30))
        }
        #expect(try await cache.token() == "t1")
        #expect(cache.cachedToken == nil)
        #expect(!cache.hasValidToken)
        #expect(try await cache.token() == "t2")
        #expect(fetches.value == 2)
    }

    @Test("a stale token (within the refresh margin) is still used while one refresh runs in the background, then the new one")
    func staleWhileRefreshing() async throws {
        let fetches = Counter()
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        // Margins of hours, so that however slowly a loaded machine runs the test, the first token
        // stays stale (not expired) and the second fresh.
        let cache = AccessTokenCache(refreshMargin: .seconds(7200), expiryMargin: .seconds(60)) {
            let n = fetches.next()
            guard n > 1 else { return AccessToken(value: "t1", expiresAt: .now + .seconds(3600)) }
            for await _ in released { break }  // the token endpoint answers when the test says
            return AccessToken(value: "t\(n)", expiresAt: .now + .seconds(3 * 3600))
        }
        #expect(try await cache.token() == "t1")
        // Stale from the start: every look uses it, and the first starts the one refresh. (Looks
        // that cannot wait, so that a cache that waited would fail here, not hang.)
        for _ in 0..<100 { #expect(cache.cachedToken == "t1") }
        #expect(cache.hasValidToken && cache.timeLeft > .seconds(60))
        #expect(cache.refreshCount == 2, "one background refresh for every look at a stale token")
        release.yield()
        // Dropping the stale token makes the next caller wait for the refresh under way (or take
        // its result): the new token, with no third fetch.
        cache.invalidate("t1")
        #expect(try await cache.token() == "t2")
        #expect(cache.refreshCount == 2 && fetches.value == 2)
        release.finish()
    }

    @Test("a failing refresh of a stale token costs no send: the token stays in use, and it is not retried within the spacing")
    func staleRefreshFailing() async throws {
        let fetches = Counter()
        let cache = AccessTokenCache(refreshMargin: .seconds(7200), expiryMargin: .seconds(60), retrySpacing: .seconds(3600)) {
            if fetches.next() > 1 { throw FCMConfigurationError("token endpoint unavailable") }
            return AccessToken(value: "t1", expiresAt: .now + .seconds(3600))  // stale from the start
        }
        #expect(try await cache.token() == "t1")
        for _ in 0..<100 { #expect(try await cache.token() == "t1") }
        // The one refresh either still runs or failed within the spacing: no other started.
        #expect(cache.refreshCount == 2)
        #expect(cache.cachedToken == "t1")
    }

    @Test("readiness and metrics looking at an idle worker's stale token start its refresh")
    func looksKeepItFresh() async throws {
        let fetches = Counter()
        let cache = AccessTokenCache(refreshMargin: .seconds(7200), expiryMargin: .seconds(60)) {
            let n = fetches.next()
            return AccessToken(value: "t\(n)", expiresAt: .now + .seconds(n == 1 ? 3600 : 3 * 3600))  // stale, then fresh
        }
        _ = try await cache.token()
        #expect(cache.hasValidToken)
        #expect(cache.refreshCount == 2)
        cache.invalidate("t1")
        #expect(try await cache.token() == "t2")
        #expect(cache.timeLeft > .seconds(7200))
        #expect(cache.refreshCount == 2)
    }

    @Test("a failed refresh is reported and the next call tries again")
    func failedRefresh() async throws {
        let fetches = Counter()
        let cache = AccessTokenCache {
            if fetches.next() == 1 { throw FCMConfigurationError("token endpoint said no") }
            return AccessToken(value: "ok", expiresAt: .now + .seconds(3600))
        }
        await #expect(throws: FCMConfigurationError.self) { _ = try await cache.token() }
        #expect(try await cache.token() == "ok")
    }
}
