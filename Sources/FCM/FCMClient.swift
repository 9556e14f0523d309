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
        /// A connection (to FCM or the token endpoint) with sends waiting that receives nothing
        /// for this long is closed as dead, and its sends go again at once on another
        /// (``HTTP2/HTTP2Client/Configuration/livenessTimeout``). Default 10 s; `.zero`: off.
        public var livenessTimeout: Duration = .seconds(10)
        /// What drives the HTTP/2 connections (``HTTP2/HTTP2Client/Engine``). Default `.nghttp2`;
        /// with a ``proxy``, always `.libcurl` (the nghttp2 engine connects directly).
        public var engine: HTTP2Client.Engine = .nghttp2
        /// Told of each connection closed as dead, on the HTTP/2 client's thread (log and count it).
        public var onDeadConnection: (@Sendable (DeadConnection) -> Void)?
        /// Told when FCM stops answering, every 30 s while it does not, and when it answers again
        /// (``FCMAvailability/Change``), on the thread of the attempt that changed it: log it.
        public var onAvailabilityChange: (@Sendable (FCMAvailability.Change) -> Void)?

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
        /// Each attempt, when the send was asked to record them (a traced event's send spans);
        /// nil otherwise.
        public var attemptLog: [Attempt]?

        public init(outcome: Result<String, FCMError>, attempts: Int, quotaRefusals: [FCMError.QuotaScope] = []) {
            self.outcome = outcome
            self.attempts = attempts
            self.quotaRefusals = quotaRefusals
        }

        /// One attempt: when it went and ended, and how.
        public struct Attempt: Sendable {
            public var started: ContinuousClock.Instant
            public var ended: ContinuousClock.Instant
            public var outcome: Result<String, FCMError>
        }

        /// Refusals of the project's quota, each of which paused every send.
        public var quotaPauses: Int { quotaRefusals.count { $0 == .project } }
    }

    public let configuration: Configuration
    public var projectID: String { configuration.serviceAccount.projectID }
    let http: HTTP2Client
    let tokens: AccessTokenCache
    let gate: SendGate
    private let sendURL: String
    private let lastHeaders = Mutex<(token: String, headers: HTTPHeaders)?>(nil)
    /// Whether FCM is answering, and the devices and topics it throttled.
    let health = Mutex(Health())
    /// Mirrors `!health.backoff.isEmpty`, so a send need not lock to learn nothing is held.
    let anyHeld = Atomic<Bool>(false)
    /// The send rate's caps, kept on the wire by the HTTP/2 client (``HTTP2Client/setRate(_:)``).
    private let rateCaps: Mutex<RateCaps>

    struct Health {
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
        httpConfiguration.livenessTimeout = configuration.livenessTimeout
        httpConfiguration.onDeadConnection = configuration.onDeadConnection
        httpConfiguration.engine = configuration.proxy == nil ? configuration.engine : .libcurl
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
    ///   - recordingAttempts: keep each attempt in ``SendResult/attemptLog``.
    ///   - deadline: no attempt starts at or after it, and an attempt's request times out at it
    ///     at the latest; then the outcome is a ``FCMError/Code/deadline`` failure (nil: the retry
    ///     budget alone ends the send). A capped push's send limit (docs/rules-state.md).
    public func send(
        _ message: [UInt8], to target: MessageTarget? = nil, validateOnly: Bool = false, recordingAttempts: Bool = false,
        deadline: ContinuousClock.Instant? = nil
    ) async -> SendResult {
        let body = Self.requestBody(message, validateOnly: validateOnly)
        var result = SendResult(outcome: .failure(.cancelled), attempts: 0)
        if recordingAttempts { result.attemptLog = [] }
        var retry = newRetryState()
        retry.deadline = deadline
        return await attempts(body, target: target, from: result, retry: retry)
    }

    /// The attempts of a send, from `result` and `retry` on: after `delay`, if given (a retry's
    /// backoff after a first attempt ``start(_:to:validateOnly:then:)`` made).
    func attempts(
        _ body: [UInt8], target: MessageTarget?, from result: SendResult, retry: RetryState, after delay: Duration? = nil
    ) async
        -> SendResult
    {
        // Thousands of sends may wait here at once, each in its task's async frame: what lives
        // across the awaits is kept to the body, the result and `retry`; the failure handling and
        // the sleeps are functions of their own, whose locals need no room while a send waits on
        // FCM (3,552 bytes of frame per send before, docs/benchmarks.md).
        var result = result
        var retry = retry
        if let delay { await Self.sleep(for: retry.wait(delay)) }
        while true {
            if let target, let until = heldUntil(target) { await Self.sleep(until: retry.wait(until: until)) }
            if Task.isCancelled {
                result.outcome = .failure(.cancelled)
                return result
            }
            // The last attempt's failure, which a deadline's failure names.
            var last: FCMError?
            if result.attempts > 0, case .failure(let error) = result.outcome { last = error }
            if let deadline = retry.deadline, ContinuousClock.now >= deadline {
                result.outcome = .failure(.pastDeadline(after: last))
                return result
            }
            result.attempts += 1
            let attemptStarted = ContinuousClock.now
            result.outcome = await attempt(body, deadline: retry.deadline)
            // Passed while it waited for a send slot: after a retry, not "before its first attempt".
            if case .failure(let error) = result.outcome, error.code == .deadline, let last { result.outcome = .failure(.pastDeadline(after: last)) }
            switch afterAttempt(&result, &retry, attemptStarted: attemptStarted, target: target) {
            case .done: return result
            case .again: continue
            case .after(let delay): await Self.sleep(for: retry.wait(delay))
            }
        }
    }

    func newRetryState() -> RetryState {
        var retry = RetryState(started: .now)
        retry.waitedAtStart = health.withLock { $0.availability.waited(upTo: retry.started) }
        return retry
    }

    /// One attempt: no retry, but a classified failure. With a `deadline`, none is made once it
    /// has passed (a wait for a send slot may outlast it), and its request is the HTTP/2
    /// client's with that `notAfter`: never sent at or after it, even while it waits for its
    /// pacing slot, and timed out at it at the latest.
    public func attempt(_ body: [UInt8], deadline: ContinuousClock.Instant? = nil) async -> Result<String, FCMError> {
        await gate.acquire()
        if Task.isCancelled {
            gate.release(answerTime: nil)
            return .failure(.cancelled)
        }
        if let deadline, deadline <= .now {
            gate.release(answerTime: nil)
            return .failure(.pastDeadline(after: nil))
        }
        let (result, answerTime) = await post(body, notAfter: deadline)
        gate.release(answerTime: answerTime)
        return result
    }

    /// The outcome, and FCM's answer time when it answered (whatever it said): what sizes the
    /// sends in flight. No answer says nothing of answer times.
    private func post(_ body: [UInt8], notAfter: ContinuousClock.Instant? = nil) async -> (Result<String, FCMError>, answerTime: Duration?) {
        let token: String
        do {
            token = try await tokens.token()
        } catch let error as FCMError {
            return (.failure(error), nil)
        } catch is CancellationError {
            return (.failure(.cancelled), nil)
        } catch {
            return (.failure(FCMError(code: .tokenExchange, kind: .retryable, httpStatus: nil, message: "\(error)")), nil)
        }
        let answer: Result<HTTPResponse, HTTP2ClientError>
        do {
            answer = .success(try await http.send(sendRequest(body, token: token, notAfter: notAfter)))
        } catch {
            answer = .failure(error)
        }
        return classify(answer, token: token)
    }

    /// An attempt's outcome from what the HTTP/2 client got, and FCM's answer time if it
    /// answered. A refused access token is dropped, so the next attempt fetches another.
    func classify(_ answer: Result<HTTPResponse, HTTP2ClientError>, token: String) -> (Result<String, FCMError>, answerTime: Duration?) {
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

    /// The request of one attempt. Paced: a rate cap holds where the send goes on the wire
    /// (``HTTP2Client/setRate(_:)``).
    /// `notAfter`: the send's deadline (``HTTPRequest/notAfter``), nil for none.
    func sendRequest(_ body: [UInt8], token: String, notAfter: ContinuousClock.Instant? = nil) -> HTTPRequest {
        HTTPRequest(method: "POST", url: sendURL, headers: headers(for: token), body: body, notAfter: notAfter, paced: true)
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

    /// Whether a usable access token is cached (more than a minute left).
    public var hasAccessToken: Bool { tokens.hasValidToken }

    /// How long the cached access token is valid for (zero: none). Refreshed from 5 min before
    /// its expiry while sends go on with it; below a minute, refreshes have failed for minutes.
    public var accessTokenTimeLeft: Duration { tokens.timeLeft }

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

    /// Sends waiting for a free slot (``waitForRoom()``, ``whenRoom(_:)``) now.
    public var waitingForRoom: Int { gate.roomWaitersCount }

    /// HTTP/2 connections open now, and opened since the client started.
    public var connections: (open: Int, opened: Int) { (http.openConnections, http.connectionsOpened) }

    /// Whether FCM is answering this client (for readiness and the waiting metric).
    public var availability: FCMAvailability {
        health.withLock { $0.availability }
    }

    /// How long FCM has not been answering, and why, if it is not: sends failing without an
    /// answer (``availability``), or sends in flight with no answer at all since (a connection
    /// gone silent, a token that does not come). nil while FCM answers.
    public func waitingOnFCM(at now: ContinuousClock.Instant) -> (duration: Duration, reason: String)? {
        let failing = availability
        let failed = failing.waiting(at: now).map { ($0, failing.lastFailure ?? "no answer") }
        let silent = gate.unanswered(at: now).map { ($0.duration, "\($0.sends) sends in flight and no answer") }
        switch (failed, silent) {
        case (let f?, let s?): return f.0 >= s.0 ? f : s
        case (let f?, nil): return f
        case (nil, let s?): return s.0 > .zero ? s : nil
        case (nil, nil): return nil
        }
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
