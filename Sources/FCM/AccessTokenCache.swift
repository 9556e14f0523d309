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
/// suspending. Only callers with no usable token wait, all for the same refresh.
///
/// - Important: The token is a secret: it is never logged.
public final class AccessTokenCache: Sendable {
    public typealias Fetch = @Sendable () async throws -> AccessToken

    private struct State {
        var current: AccessToken?
        var refreshing: Task<AccessToken, any Error>?
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

    private enum Lookup {
        case cached(String)
        case refresh(Task<AccessToken, any Error>)
    }

    /// A usable token: the cached one (refreshed in the background when it is stale), or the
    /// result of the one refresh in flight.
    public func token() async throws -> String {
        let lookup = state.withLock { s -> Lookup in
            if let usable = usable(&s, at: .now) { return .cached(usable) }
            return .refresh(s.refreshing ?? startRefresh(&s))
        }
        switch lookup {
        case .cached(let value): return value
        case .refresh(let task): return try await task.value.value
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
        if now + refreshMargin >= current.expiresAt, s.refreshing == nil, s.lastFailure.map({ now - $0 >= retrySpacing }) ?? true {
            _ = startRefresh(&s)
        }
        return current.value
    }

    /// Starts the one refresh, which stores its own result whoever waits for it (a stale token's
    /// refresh has no one waiting).
    private func startRefresh(_ s: inout State) -> Task<AccessToken, any Error> {
        let task = Task { [self] in
            do {
                let token = try await fetch()
                self.state.withLock { s in
                    s.current = token
                    s.refreshing = nil
                    s.lastFailure = nil
                }
                return token
            } catch {
                self.state.withLock { s in
                    s.refreshing = nil
                    s.lastFailure = .now
                }
                throw error
            }
        }
        s.refreshing = task
        s.refreshCount += 1
        return task
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
