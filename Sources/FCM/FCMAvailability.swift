/// Whether FCM is answering, from the outcomes of this client's attempts. Pure: instants in,
/// state out; ``FCMClient`` keeps one under its lock.
///
/// FCM *answers* when an attempt gets any verdict about the message: success, a bad payload, a
/// dead token, one device's or topic's quota. It is *unavailable* while the latest attempt
/// to finish failed transiently (5xx, connection loss, a timeout, the project's quota) and
/// nothing has been answered since. The client is then **waiting on FCM**: readiness, the
/// `pushbridge_fcm_waiting_seconds` metric and an alert say so, and that time does not count
/// against any send's retry budget, so an outage holds events instead of dead-lettering them.
public struct FCMAvailability: Sendable {
    /// Since when FCM has not answered, if it is not answering now.
    public private(set) var waitingSince: ContinuousClock.Instant?
    /// What the latest transient failure was, for readiness and logs.
    public private(set) var lastFailure: String?
    /// When an attempt last succeeded.
    public private(set) var lastSuccess: ContinuousClock.Instant?
    /// When an attempt last got an answer of any kind.
    private var lastAnswer: ContinuousClock.Instant?
    /// Waiting time of waits that have ended.
    private var waitedBefore: Duration = .zero
    /// The latest quota refusals that did not say whose quota, of the last two targets refused.
    private var refusals: [(target: MessageTarget, at: ContinuousClock.Instant)] = []
    /// Attempts failed during the current wait, and when the wait was last reported.
    private var failuresThisWait = 0
    private var reported: ContinuousClock.Instant?

    /// While FCM does not answer, a line at most this often says it still does not.
    public static let reportPeriod: Duration = .seconds(30)

    public init() {}

    /// What an operator is told of FCM's availability: a wait when it starts, a count every
    /// ``reportPeriod`` while it lasts, and its end, instead of a line per failed attempt.
    public enum Change: Sendable, Equatable {
        case stoppedAnswering(reason: String)
        case stillNotAnswering(for: Duration, failedAttempts: Int, lastFailure: String)
        case answeringAgain(after: Duration, failedAttempts: Int)
    }

    /// An attempt got an answer from FCM, successful or not about the message. Returns the end
    /// of a wait, if this ends one.
    @discardableResult
    public mutating func answered(at now: ContinuousClock.Instant, success: Bool) -> Change? {
        if success { lastSuccess = max(lastSuccess ?? now, now) }
        lastAnswer = max(lastAnswer ?? now, now)
        guard let since = waitingSince else { return nil }
        waitedBefore += max(.zero, now - since)
        waitingSince = nil
        defer { (failuresThisWait, reported) = (0, nil) }
        return .answeringAgain(after: max(.zero, now - since), failedAttempts: failuresThisWait)
    }

    /// An attempt that started at `start` failed in a way that says nothing about the message:
    /// FCM has not been answering since then (a request that timed out after 30 s waited that
    /// long). Unless FCM answered another attempt after this one was sent: that answer is the
    /// newer news, and a failure from before it starts no wait. Returns the start of a wait, or
    /// a periodic report of one that goes on, as of `now` (default: `start`).
    @discardableResult
    public mutating func failedTransiently(
        since start: ContinuousClock.Instant, reason: String, at now: ContinuousClock.Instant? = nil
    ) -> Change? {
        lastFailure = reason
        if let lastAnswer, start < lastAnswer { return nil }
        let now = max(now ?? start, start)
        guard let since = waitingSince else {
            (waitingSince, failuresThisWait, reported) = (start, 1, now)
            return .stoppedAnswering(reason: reason)
        }
        failuresThisWait += 1
        guard now - (reported ?? since) >= Self.reportPeriod else { return nil }
        reported = now
        return .stillNotAnswering(for: now - since, failedAttempts: failuresThisWait, lastFailure: reason)
    }

    /// All the time spent waiting on FCM, up to `now`: a send's budget time is its age minus
    /// how much this grew while it was under way.
    public func waited(upTo now: ContinuousClock.Instant) -> Duration {
        waitedBefore + (waitingSince.map { max(.zero, now - $0) } ?? .zero)
    }

    /// How long the current wait has lasted, or nil when FCM is answering.
    public func waiting(at now: ContinuousClock.Instant) -> Duration? {
        waitingSince.map { max(.zero, now - $0) }
    }

    /// Records a QUOTA_EXCEEDED for `target` whose answer does not say whose quota it is, and
    /// says whether it is the target's own: other sends have got through since another target
    /// was last refused. If no send has got through yet, or another target was refused since,
    /// it is the project's (when in doubt, everyone pauses). No clock window: a loaded machine
    /// or a quiet hour changes nothing.
    public mutating func refusedOwnQuota(_ target: MessageTarget, at now: ContinuousClock.Instant) -> Bool {
        let lastOtherRefusal = refusals.filter { $0.target != target }.map(\.at).max()
        let own: Bool =
            switch (lastSuccess, lastOtherRefusal) {
            case (nil, _): false
            case (_?, nil): true
            case (let success?, let refusal?): success > refusal
            }
        refusals.removeAll { $0.target == target }
        refusals.append((target, now))
        if refusals.count > 2 { refusals.removeFirst() }
        return own
    }
}
