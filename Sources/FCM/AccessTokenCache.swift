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
/// - Important: The token is a secret: it is never logged.
public actor AccessTokenCache {
    public typealias Fetch = @Sendable () async throws -> AccessToken

    private let fetch: Fetch
    private let refreshMargin: Duration
    private var current: AccessToken?
    private var refreshing: Task<AccessToken, any Error>?
    /// How many times `fetch` ran (for metrics and tests).
    public private(set) var refreshCount = 0

    /// - Parameters:
    ///   - refreshMargin: a token this close to expiry is refreshed before use. Default 5 min.
    ///   - fetch: obtains a new token (signs a JWT and exchanges it).
    public init(refreshMargin: Duration = .seconds(300), fetch: @escaping Fetch) {
        self.refreshMargin = refreshMargin
        self.fetch = fetch
    }

    /// A valid token: the cached one, or the result of the one refresh in flight.
    public func token() async throws -> String {
        if let current, ContinuousClock.now + refreshMargin < current.expiresAt {
            return current.value
        }
        if let refreshing { return try await refreshing.value.value }
        let task = Task { [fetch] in try await fetch() }
        refreshing = task
        refreshCount += 1
        defer { refreshing = nil }
        let token = try await task.value
        current = token
        return token.value
    }

    /// Drops `token` after FCM refused it (401 UNAUTHENTICATED), so the next ``token()`` call
    /// refreshes — once, however many sends saw the same refusal.
    public func invalidate(_ token: String) {
        if current?.value == token { current = nil }
    }

    /// Whether a usable token is cached (for readiness).
    public var hasValidToken: Bool {
        guard let current else { return false }
        return ContinuousClock.now < current.expiresAt
    }
}
