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
/// A lock, not an actor: every send asks for the token, and a cached one is returned without
/// suspending. Only callers that need a refresh wait, all for the same one.
///
/// - Important: The token is a secret: it is never logged.
public final class AccessTokenCache: Sendable {
    public typealias Fetch = @Sendable () async throws -> AccessToken

    private struct State {
        var current: AccessToken?
        var refreshing: Task<AccessToken, any Error>?
        var refreshCount = 0
    }

    private let fetch: Fetch
    private let refreshMargin: Duration
    private let state = Mutex(State())

    /// - Parameters:
    ///   - refreshMargin: a token this close to expiry is refreshed before use. Default 5 min.
    ///   - fetch: obtains a new token (signs a JWT and exchanges it).
    public init(refreshMargin: Duration = .seconds(300), fetch: @escaping Fetch) {
        self.refreshMargin = refreshMargin
        self.fetch = fetch
    }

    private enum Lookup {
        case cached(String)
        case refresh(Task<AccessToken, any Error>)
    }

    /// A valid token: the cached one, or the result of the one refresh in flight.
    public func token() async throws -> String {
        let lookup = state.withLock { s -> Lookup in
            if let current = s.current, ContinuousClock.now + refreshMargin < current.expiresAt {
                return .cached(current.value)
            }
            if let refreshing = s.refreshing { return .refresh(refreshing) }
            // The refresh stores its own result, whichever caller wakes first.
            let task = Task { [self] in
                do {
                    let token = try await fetch()
                    self.state.withLock { s in
                        s.current = token
                        s.refreshing = nil
                    }
                    return token
                } catch {
                    self.state.withLock { $0.refreshing = nil }
                    throw error
                }
            }
            s.refreshing = task
            s.refreshCount += 1
            return .refresh(task)
        }
        switch lookup {
        case .cached(let value): return value
        case .refresh(let task): return try await task.value.value
        }
    }

    /// The cached token if it needs no refresh now; nil otherwise (``token()`` refreshes it).
    public var cachedToken: String? {
        state.withLock { s in
            guard let current = s.current, ContinuousClock.now + refreshMargin < current.expiresAt else { return nil }
            return current.value
        }
    }

    /// Drops `token` after FCM refused it (401 UNAUTHENTICATED), so the next ``token()`` call
    /// refreshes — once, however many sends saw the same refusal.
    public func invalidate(_ token: String) {
        state.withLock { s in
            if s.current?.value == token { s.current = nil }
        }
    }

    /// Whether a usable token is cached (for readiness).
    public var hasValidToken: Bool {
        guard let current = state.withLock({ $0.current }) else { return false }
        return ContinuousClock.now < current.expiresAt
    }

    /// How many times `fetch` ran (for metrics and tests).
    public var refreshCount: Int { state.withLock { $0.refreshCount } }
}
