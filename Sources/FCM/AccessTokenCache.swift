import Synchronization

/// An OAuth2 access token and when it stops being valid.
public struct AccessToken: Sendable, Equatable {
    public var value: String
    public var expiresAt: ContinuousClock.Instant

    public init(value: String, expiresAt: ContinuousClock.Instant) {
        self.value = value
        self.expiresAt = expiresAt
    }
}

/// Caches the access token and refreshes it before it expires; concurrent callers share a single
/// refresh.
///
/// A token has three ages (as Google's own auth libraries give it, e.g. google-auth-library-java's
/// `OAuth2Credentials`: fresh, stale, expired):
/// - **fresh**, more than `refreshMargin` left: used as it is;
/// - **stale**, less than that but more than `expiryMargin`: still used, while one refresh runs
///   in the background. Sends never wait for it, and a token endpoint that fails for a while
///   costs nothing until the token is about to expire; a failed refresh is tried again by the
///   next caller, at most once per `retrySpacing`;
/// - **expired**, `expiryMargin` or less left (or none, or refused by FCM): not used; callers
///   wait for the refresh.
///
/// A lock, not an actor: every send asks for the token, and a usable one is returned without
/// suspending. Only callers with no usable token wait, all for the same refresh; a caller whose
/// task is cancelled stops waiting at once (the refresh goes on for the others).
///
/// - Important: The token is a secret: it is never logged.
public final class AccessTokenCache: Sendable {
    public typealias Fetch = @Sendable () async throws -> AccessToken

    private struct State {
        var current: AccessToken?
        /// A refresh is under way.
        var refreshing = false
        /// Callers waiting for the refresh under way, told its outcome when it ends.
        var waiters: [UInt64: CheckedContinuation<String, any Error>] = [:]
        var lastWaiter: UInt64 = 0
        var refreshCount = 0
        /// When the last refresh failed (nil once one succeeds).
        var lastFailure: ContinuousClock.Instant?
    }

    private let fetch: Fetch
    private let refreshMargin: Duration
    private let expiryMargin: Duration
    private let retrySpacing: Duration
    private let state = Mutex(State())

    /// - Parameters:
    ///   - refreshMargin: a token this close to expiry is refreshed in the background. Default 5 min.
    ///   - expiryMargin: a token this close to expiry is no longer used. Default 1 min: more than
    ///     a send's attempts take, so none goes out with a token that lapses on the way.
    ///   - retrySpacing: after a failed refresh, a stale token's next refresh waits this long.
    ///     Default 1 s.
    ///   - fetch: obtains a new token (signs a JWT and exchanges it).
    public init(
        refreshMargin: Duration = .seconds(300), expiryMargin: Duration = .seconds(60), retrySpacing: Duration = .seconds(1),
        fetch: @escaping Fetch
    ) {
        self.refreshMargin = refreshMargin
        self.expiryMargin = min(expiryMargin, refreshMargin)
        self.retrySpacing = retrySpacing
        self.fetch = fetch
    }

    /// A usable token: the cached one (refreshed in the background when it is stale), or the
    /// result of the one refresh in flight.
    /// - Throws: the refresh's error, or `CancellationError` when the task is cancelled while it
    ///   waits.
    public func token() async throws -> String {
        if let usable = state.withLock({ usable(&$0, at: .now) }) { return usable }
        let id = state.withLock { s -> UInt64 in
            s.lastWaiter &+= 1
            return s.lastWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<String, any Error>) in
                let now = ContinuousClock.now
                let answer = state.withLock { s -> Result<String, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if let usable = usable(&s, at: now) { return .success(usable) }  // a refresh ended meanwhile
                    if !s.refreshing { startRefresh(&s) }
                    s.waiters[id] = waiter
                    return nil
                }
                if let answer { waiter.resume(with: answer) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    /// The cached token if it is usable now, without waiting (a stale one starts its refresh);
    /// nil if ``token()`` would have to wait for one.
    public var cachedToken: String? {
        state.withLock { s in usable(&s, at: .now) }
    }

    /// The current token unless it is expired; a stale one starts a refresh if none runs and
    /// none failed within `retrySpacing`.
    private func usable(_ s: inout State, at now: ContinuousClock.Instant) -> String? {
        guard let current = s.current, now + expiryMargin < current.expiresAt else { return nil }
        if now + refreshMargin >= current.expiresAt, !s.refreshing, s.lastFailure.map({ now - $0 >= retrySpacing }) ?? true {
            startRefresh(&s)
        }
        return current.value
    }

    /// Starts the one refresh, which stores its own result and tells whoever waits for it (a
    /// stale token's refresh may have no one waiting). A task of its own, not a caller's child:
    /// it is asked for from any send, readiness probe or scrape, serves all of them, and ends
    /// with its fetch.
    private func startRefresh(_ s: inout State) {
        s.refreshing = true
        s.refreshCount += 1
        Task { [self] in
            do {
                let token = try await fetch()
                let waiters = self.state.withLock { s in
                    s.current = token
                    s.refreshing = false
                    s.lastFailure = nil
                    defer { s.waiters.removeAll() }
                    return Array(s.waiters.values)
                }
                for waiter in waiters { waiter.resume(returning: token.value) }
            } catch {
                let waiters = self.state.withLock { s in
                    s.refreshing = false
                    s.lastFailure = .now
                    defer { s.waiters.removeAll() }
                    return Array(s.waiters.values)
                }
                for waiter in waiters { waiter.resume(throwing: error) }
            }
        }
    }

    /// Drops `token` after FCM refused it (401 UNAUTHENTICATED), so the next ``token()`` call
    /// refreshes — once, however many sends saw the same refusal.
    public func invalidate(_ token: String) {
        state.withLock { s in
            if s.current?.value == token { s.current = nil }
        }
    }

    /// Whether a usable token is cached (for readiness). Like every look at the token, it starts a
    /// stale one's refresh: readiness probes and metrics scrapes keep an idle worker's token
    /// fresh, with no timer of its own.
    public var hasValidToken: Bool { cachedToken != nil }

    /// How long the cached token is valid for; zero if there is none. Starts a stale token's
    /// refresh, as ``hasValidToken`` does.
    public var timeLeft: Duration {
        let now = ContinuousClock.now
        return state.withLock { s in
            _ = usable(&s, at: now)
            return s.current.map { max(.zero, $0.expiresAt - now) } ?? .zero
        }
    }

    /// How many times `fetch` ran (for metrics and tests).
    public var refreshCount: Int { state.withLock { $0.refreshCount } }
}
