import Foundation
import HTTP2
import JSON
import Synchronization

/// Sends messages to FCM HTTP v1 (`POST {baseURL}/v1/projects/{project}/messages:send`) over
/// multiplexed HTTP/2, with as many sends in flight and as many connections as FCM's answer
/// times call for (``Configuration/concurrency``, ``Configuration/maxConnections``), OAuth2 from
/// a service account, classified errors and retries.
///
/// ```swift
/// let fcm = try FCMClient(configuration: .init(serviceAccount: try .load(path: nil)))
/// let result = await fcm.send(message.encoded)
/// switch result.outcome { case .success(let name): …; case .failure(let error): … }
/// await fcm.shutdown()
/// ```
///
/// - Important: The service account's key and the access token are secrets: neither appears in
///   errors, descriptions or logs.
public final class FCMClient: Sendable {
    public struct Configuration: Sendable {
        public var serviceAccount: ServiceAccount
        /// Default `https://fcm.googleapis.com`; tests and the demo point it at the emulator.
        public var baseURL: String = "https://fcm.googleapis.com"
        /// A PEM file of CAs to trust instead of the system's. TLS verification cannot be turned off.
        public var caFile: String?
        public var retry = RetryPolicy()
        /// Sends started per second at most, e.g. this worker's share of the project's 600k/min
        /// quota: evenly spaced, never in bursts. nil: no limit.
        public var maxSendsPerSecond: Double?
        /// How many sends may wait for FCM's answer at once: it follows FCM's answer times
        /// (``ConcurrencyLimit``), between a floor of 1,000 and a ceiling that bounds memory.
        public var concurrency = ConcurrencyLimit.Parameters()
        /// HTTP/2 streams per connection. Default 100 (what FCM allows).
        public var maxStreams: Int = 100
        /// HTTP/2 connections at most. They open as the sends in flight need streams
        /// (`maxStreams` each) and close when idle. Default 64.
        public var maxConnections: Int = 64
        /// Threads driving the connections. Default: one per CPU, at most 4.
        public var threads: Int = HTTP2Client.defaultThreads
        /// Time allowed for one attempt. Default 30 s.
        public var requestTimeout: Duration = .seconds(30)
        /// The egress proxy for the sends and the token exchange alike; nil: direct (the
        /// environment's `HTTPS_PROXY` is not read here: the caller decides).
        public var proxy: HTTPProxy?

        public init(serviceAccount: ServiceAccount) {
            self.serviceAccount = serviceAccount
        }
    }

    /// The outcome of ``send(_:to:validateOnly:)``, after any retries.
    public struct SendResult: Sendable {
        /// The message name FCM assigned (`projects/p/messages/…`), or the last failure.
        public var outcome: Result<String, FCMError>
        /// Attempts made, the first included.
        public var attempts: Int
        /// Whose quota each QUOTA_EXCEEDED answer was, in order (resolved: never
        /// ``FCMError/QuotaScope/undetermined``).
        public var quotaRefusals: [FCMError.QuotaScope]

        public init(outcome: Result<String, FCMError>, attempts: Int, quotaRefusals: [FCMError.QuotaScope] = []) {
            self.outcome = outcome
            self.attempts = attempts
            self.quotaRefusals = quotaRefusals
        }

        /// Refusals of the project's quota, each of which paused every send.
        public var quotaPauses: Int { quotaRefusals.count { $0 == .project } }
    }

    public let configuration: Configuration
    public var projectID: String { configuration.serviceAccount.projectID }
    private let http: HTTP2Client
    private let tokens: AccessTokenCache
    private let gate: SendGate
    private let sendURL: String
    private let lastHeaders = Mutex<(token: String, headers: HTTPHeaders)?>(nil)
    /// Whether FCM is answering, and the devices and topics it throttled.
    private let health = Mutex(Health())
    /// Mirrors `!health.backoff.isEmpty`, so a send need not lock to learn nothing is held.
    private let anyHeld = Atomic<Bool>(false)
    /// The send rate's caps, kept on the wire by the HTTP/2 client (``HTTP2Client/setRate(_:)``).
    private let rateCaps: Mutex<RateCaps>

    private struct Health {
        var availability = FCMAvailability()
        var backoff = TargetBackoff()
    }

    /// - Throws: ``HTTP2ClientError`` if the HTTP/2 client cannot start.
    public init(configuration: Configuration) throws(HTTP2ClientError) {
        self.configuration = configuration
        let caps = RateCaps(configured: RateCaps.positive(configuration.maxSendsPerSecond))
        self.rateCaps = Mutex(caps)
        var httpConfiguration = HTTP2Client.Configuration(caFile: configuration.caFile)
        httpConfiguration.maxConcurrentStreams = configuration.maxStreams
        httpConfiguration.maxConnections = configuration.maxConnections
        httpConfiguration.threads = configuration.threads
        httpConfiguration.requestTimeout = configuration.requestTimeout
        httpConfiguration.proxy = configuration.proxy
        let http = try HTTP2Client(configuration: httpConfiguration)
        http.setRate(caps.holding)
        self.http = http
        let account = configuration.serviceAccount
        self.tokens = AccessTokenCache { try await TokenExchange.fetch(account, http: http) }
        self.gate = SendGate(concurrency: configuration.concurrency)
        var base = configuration.baseURL
        while base.hasSuffix("/") { base.removeLast() }
        self.sendURL = "\(base)/v1/projects/\(account.projectID)/messages:send"
    }

    /// Sends one message, retrying as the policy says (a cancelled task stops before its next
    /// attempt, with a `SHUTDOWN` failure):
    /// - transient failures after a jittered backoff, never before `Retry-After`, for as long as
    ///   the budget allows; time spent waiting on FCM (see ``availability``) is not counted;
    /// - the project's QUOTA_EXCEEDED pauses every send of this client for at least
    ///   ``RetryPolicy/quotaPause``;
    /// - a device's or a topic's QUOTA_EXCEEDED holds sends to that target only (every send to
    ///   it, not just this one), with backoff growing per refusal in a row, a topic's at least
    ///   ``RetryPolicy/quotaPause``. An answer that does not say whose quota it is counts as the
    ///   target's while other sends succeed, else as the project's;
    /// - a refused access token is refreshed once.
    ///
    /// - Parameters:
    ///   - message: the `message` object, serialized (e.g. `FCMMessage.encoded`).
    ///   - target: who it goes to, so that a throttled device or topic is backed off on its own;
    ///     nil treats every quota refusal as the project's.
    ///   - validateOnly: FCM's dry run: validated, not delivered.
    public func send(_ message: [UInt8], to target: SendTarget? = nil, validateOnly: Bool = false) async -> SendResult {
        let body = Self.requestBody(message, validateOnly: validateOnly)
        return await attempts(body, target: target, from: SendResult(outcome: .failure(.cancelled), attempts: 0), retry: newRetryState())
    }

    /// The attempts of a send, from `result` and `retry` on: after `delay`, if given (a retry's
    /// backoff after a first attempt ``start(_:to:validateOnly:then:)`` made).
    private func attempts(
        _ body: [UInt8], target: SendTarget?, from result: SendResult, retry: RetryState, after delay: Duration? = nil
    ) async
        -> SendResult
    {
        // Thousands of sends may wait here at once, each in its task's async frame: what lives
        // across the awaits is kept to the body, the result and `retry`; the failure handling and
        // the sleeps are functions of their own, whose locals need no room while a send waits on
        // FCM (3,552 bytes of frame per send before, docs/benchmarks.md).
        var result = result
        var retry = retry
        if let delay { await Self.sleep(for: delay) }
        while true {
            if let target, let until = heldUntil(target) { await Self.sleep(until: until) }
            if Task.isCancelled {
                result.outcome = .failure(.cancelled)
                return result
            }
            result.attempts += 1
            let attemptStarted = ContinuousClock.now
            result.outcome = await attempt(body)
            switch afterAttempt(&result, &retry, attemptStarted: attemptStarted, target: target) {
            case .done: return result
            case .again: continue
            case .after(let delay): await Self.sleep(for: delay)
            }
        }
    }

    private func newRetryState() -> RetryState {
        var retry = RetryState(started: .now)
        retry.waitedAtStart = health.withLock { $0.availability.waited(upTo: retry.started) }
        return retry
    }

    /// How a send begun by ``start(_:to:validateOnly:then:)`` stands after its first attempt.
    public enum FirstAttempt: Sendable {
        /// The send is over: acknowledged, or failed with no retry due (as ``send(_:to:validateOnly:)``
        /// would have returned it).
        case finished(SendResult)
        /// A retry is due: the send goes on, with its backoff and budget, when this is run in a task.
        case unfinished(@Sendable () async -> SendResult)
    }

    /// Why ``start(_:to:validateOnly:then:)`` did not begin a send.
    public enum StartRefusal: Error, Sendable {
        /// Every slot for sends in flight is taken: ``waitForRoom()``, then start again.
        case full
        /// The send must wait first (a quota pause, a throttled target, an access token to
        /// fetch): use ``send(_:to:validateOnly:)``, which does.
        case mustWait
    }

    /// Begins a send without a task waiting on it: its first attempt goes out now, and `then`
    /// gets how it stood when FCM answered. The same send as ``send(_:to:validateOnly:)``
    /// (slots, the rate cap, classification and what the answer tells the client), for callers
    /// that keep thousands in flight: a task suspended in ``send(_:to:validateOnly:)`` holds
    /// its call chain's frames while FCM answers (docs/benchmarks.md).
    ///
    /// - Important: `then` runs on the HTTP/2 client's thread: it must be quick and must not
    ///   block. What takes longer (a retry's wait) is the `unfinished` closure, for a task.
    public func start(
        _ message: [UInt8], to target: SendTarget? = nil, validateOnly: Bool = false, then: @escaping @Sendable (FirstAttempt) -> Void
    ) -> Result<Void, StartRefusal> {
        if let target, heldUntil(target) != nil { return .failure(.mustWait) }
        guard let token = tokens.cachedToken else { return .failure(.mustWait) }
        switch gate.tryAcquire() {
        case .success: break
        case .failure(.full): return .failure(.full)
        case .failure(.paused): return .failure(.mustWait)
        }
        let body = Self.requestBody(message, validateOnly: validateOnly)
        let retry = newRetryState()
        let attemptStarted = ContinuousClock.now
        http.start(HTTPRequest(method: "POST", url: sendURL, headers: headers(for: token), body: body, paced: true)) { [self] answer in
            let (outcome, answerTime) = classify(answer, token: token)
            gate.release(answerTime: answerTime)
            var result = SendResult(outcome: outcome, attempts: 1)
            var state = retry
            let next = afterAttempt(&result, &state, attemptStarted: attemptStarted, target: target)
            switch next {
            case .done: then(.finished(result))
            case .again: then(.unfinished { [result, state] in await self.attempts(body, target: target, from: result, retry: state) })
            case .after(let delay):
                then(.unfinished { [result, state] in await self.attempts(body, target: target, from: result, retry: state, after: delay) })
            }
        }
        return .success(())
    }

    /// Returns once a send slot is free (another caller may take it first: start again), or
    /// the task is cancelled.
    public func waitForRoom() async {
        await gate.waitForRoom()
    }

    /// What a send carries from one attempt to the next, besides its result.
    private struct RetryState {
        var started: ContinuousClock.Instant
        var waitedAtStart: Duration = .zero
        var refreshed = false
    }

    private enum NextAttempt {
        case done
        /// At once: a wait, if any, is the target's hold, which the loop's top observes.
        case again
        case after(Duration)
    }

    /// Classifies an attempt's outcome, records it and says whether and when to try again.
    @inline(never)
    private func afterAttempt(
        _ result: inout SendResult, _ retry: inout RetryState, attemptStarted: ContinuousClock.Instant, target: SendTarget?
    ) -> NextAttempt {
        let now = ContinuousClock.now
        guard case .failure(var error) = result.outcome else {
            updateHealth { h in
                h.availability.answered(at: now, success: true)
                if let target, !h.backoff.isEmpty { h.backoff.cleared(target) }
            }
            return .done
        }
        if error.isShutdown { return .done }
        // For a throttled target, its refusals in a row grow the backoff, not this send's attempts.
        var strikes = result.attempts
        switch error.kind {
        case .quota:
            let scope = resolveQuotaScope(error.quotaScope, target: target, now: now)
            error.quotaScope = scope
            result.quotaRefusals.append(scope)
            if scope == .project {
                gate.pause(for: max(configuration.retry.quotaPause, error.retryAfter ?? .zero))
            } else if let target {
                strikes = updateHealth { $0.backoff.strike(target) }
            }
        case .auth:
            if retry.refreshed { return .done }
            retry.refreshed = true
        default: break
        }
        result.outcome = .failure(error)
        let budgetUsed =
            now - retry.started - recordFailure(error, attemptStarted: attemptStarted, at: now, waitedAtStart: retry.waitedAtStart)
        guard let delay = configuration.retry.delay(afterAttempt: strikes, elapsed: budgetUsed, error: error, random: Double.random(in: 0...1))
        else { return .done }
        if error.kind == .quota, error.quotaScope != .project, let target {
            // Every send to the target waits this long, this one at the top of the loop.
            updateHealth { $0.backoff.hold(target, until: now + delay, now: now) }
            return .again
        }
        return delay > .zero ? .after(delay) : .again
    }

    @inline(never)
    private static func sleep(until instant: ContinuousClock.Instant) async {
        try? await Task.sleep(until: instant, clock: .continuous)
    }

    @inline(never)
    private static func sleep(for delay: Duration) async {
        try? await Task.sleep(for: delay)
    }

    /// Notes what a failure says about FCM: nothing at all (a 5xx, no answer, the project's
    /// quota: FCM is not answering) or an answer about this message. Returns how long this
    /// client has waited on FCM since a send's start, which its budget leaves out.
    private func recordFailure(
        _ error: FCMError, attemptStarted: ContinuousClock.Instant, at now: ContinuousClock.Instant, waitedAtStart: Duration
    ) -> Duration {
        health.withLock { h in
            if error.kind == .retryable || error.kind == .configuration || error.quotaScope == .project {
                h.availability.failedTransiently(since: attemptStarted, reason: error.description)
            } else {
                h.availability.answered(at: now, success: false)
            }
            return h.availability.waited(upTo: now) - waitedAtStart
        }
    }

    /// A QUOTA_EXCEEDED whose answer does not say whose quota it is: the target's while sends to
    /// others get through, otherwise the project's, as it always was
    /// (``FCMAvailability/refusedOwnQuota(_:at:)``).
    private func resolveQuotaScope(_ scope: FCMError.QuotaScope?, target: SendTarget?, now: ContinuousClock.Instant) -> FCMError.QuotaScope {
        guard let target else { return .project }
        let perTarget: FCMError.QuotaScope = target.isDevice ? .device : .topic
        switch scope ?? .undetermined {
        case .project: return .project
        case .device, .topic: return perTarget
        case .undetermined:
            return health.withLock { $0.availability.refusedOwnQuota(target, at: now) } ? perTarget : .project
        }
    }

    /// When sends to `target` may go again, if FCM throttled it. Without any throttled target
    /// (the usual case) this takes no lock.
    private func heldUntil(_ target: SendTarget) -> ContinuousClock.Instant? {
        guard anyHeld.load(ordering: .relaxed) else { return nil }
        return health.withLock { $0.backoff.heldUntil(target, now: .now) }
    }

    /// Changes the health state under its lock, keeping ``anyHeld`` true to it.
    private func updateHealth<T>(_ change: (inout Health) -> T) -> T {
        health.withLock { h in
            let result = change(&h)
            anyHeld.store(!h.backoff.isEmpty, ordering: .relaxed)
            return result
        }
    }

    /// One attempt: no retry, but a classified failure.
    public func attempt(_ body: [UInt8]) async -> Result<String, FCMError> {
        await gate.acquire()
        if Task.isCancelled {
            gate.release(answerTime: nil)
            return .failure(.cancelled)
        }
        let (result, answerTime) = await post(body)
        gate.release(answerTime: answerTime)
        return result
    }

    /// The outcome, and FCM's answer time when it answered (whatever it said): what sizes the
    /// sends in flight. No answer says nothing of answer times.
    private func post(_ body: [UInt8]) async -> (Result<String, FCMError>, answerTime: Duration?) {
        let token: String
        do {
            token = try await tokens.token()
        } catch let error as FCMError {
            return (.failure(error), nil)
        } catch {
            return (.failure(FCMError(code: .tokenExchange, kind: .retryable, httpStatus: nil, message: "\(error)")), nil)
        }
        // Paced: a rate cap holds where the send goes on the wire (``HTTP2Client/setRate(_:)``).
        let request = HTTPRequest(method: "POST", url: sendURL, headers: headers(for: token), body: body, paced: true)
        let answer: Result<HTTPResponse, HTTP2ClientError>
        do {
            answer = .success(try await http.send(request))
        } catch {
            answer = .failure(error)
        }
        return classify(answer, token: token)
    }

    /// An attempt's outcome from what the HTTP/2 client got, and FCM's answer time if it
    /// answered. A refused access token is dropped, so the next attempt fetches another.
    private func classify(_ answer: Result<HTTPResponse, HTTP2ClientError>, token: String) -> (Result<String, FCMError>, answerTime: Duration?) {
        let response: HTTPResponse
        switch answer {
        case .success(let r): response = r
        case .failure(let error): return (.failure(FCMError(transport: error)), nil)
        }
        if response.status == 200 {
            guard let name = Self.messageName(response.body) else {
                return (
                    .failure(FCMError(code: .internal, kind: .retryable, httpStatus: 200, message: "a 200 answer without a message name")),
                    response.answerTime
                )
            }
            return (.success(name), response.answerTime)
        }
        let error = FCMErrorClassifier.classify(status: response.status, body: response.body, retryAfter: response.headers["retry-after"])
        if error.kind == .auth { tokens.invalidate(token) }
        return (.failure(error), response.answerTime)
    }

    /// The request headers for `token`, built once per token: every send shares the same strings,
    /// so the HTTP/2 client sees identical headers and reuses its libcurl header list.
    private func headers(for token: String) -> HTTPHeaders {
        lastHeaders.withLock { last in
            if let last, last.token == token { return last.headers }
            let headers: HTTPHeaders = ["authorization": "Bearer \(token)", "content-type": "application/json; charset=UTF-8"]
            last = (token, headers)
            return headers
        }
    }

    /// Fetches an access token now, so that readiness can report it and the first sends don't wait.
    public func warmUp() async throws {
        _ = try await tokens.token()
    }

    /// Whether a valid access token is cached.
    public var hasAccessToken: Bool { tokens.hasValidToken }

    /// How many access tokens have been fetched.
    public var tokenRefreshes: Int { tokens.refreshCount }

    /// Sets this worker's share of the project's send rate (`fcm.project_sends_per_second`
    /// split across the group; nil: none). The lower of it and
    /// ``Configuration/maxSendsPerSecond`` holds from the next send on.
    public func setProjectShare(sendsPerSecond: Double?) {
        // Under the lock, so that two changes reach the HTTP/2 client in their order.
        rateCaps.withLock { caps in
            caps.share = RateCaps.positive(sendsPerSecond)
            http.setRate(caps.holding)
        }
    }

    /// The rate cap that holds now (the configured one or the project share, the lower), if any.
    public var maxSendsPerSecond: Double? { http.rate }

    /// When sending resumes after QUOTA_EXCEEDED, if it is paused now.
    public var quotaPausedUntil: ContinuousClock.Instant? { gate.pausedUntilInstant }

    /// Sends that may be in flight now: what the answer times call for (``ConcurrencyLimit``).
    public var concurrencyLimit: Int { gate.concurrencyLimit }

    /// HTTP/2 connections open now, and opened since the client started.
    public var connections: (open: Int, opened: Int) { (http.openConnections, http.connectionsOpened) }

    /// Whether FCM is answering this client (for readiness and the waiting metric).
    public var availability: FCMAvailability {
        health.withLock { $0.availability }
    }

    /// Devices and topics whose sends are held after FCM throttled them, now.
    public var heldTargets: Int {
        let now = ContinuousClock.now
        return health.withLock { $0.backoff.entries.values.count { $0.until > now } }
    }

    /// Fails pending sends and stops the connection.
    public func shutdown() async {
        await http.shutdown()
    }

    /// `{"message":…}`, plus `"validate_only":true` for a dry run.
    static func requestBody(_ message: [UInt8], validateOnly: Bool) -> [UInt8] {
        var body: [UInt8] = []
        body.reserveCapacity(message.count + 32)
        body.append(contentsOf: #"{"message":"#.utf8)
        body.append(contentsOf: message)
        body.append(contentsOf: (validateOnly ? #","validate_only":true}"# : "}").utf8)
        return body
    }

    static func messageName(_ body: [UInt8]) -> String? {
        guard case .string(let name)? = (try? JSONParser.parse(body))?["name"] else { return nil }
        return name
    }
}
