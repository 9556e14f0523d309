import HTTP2

/// A failed FCM send, classified by what the caller should do about it.
///
/// Built from FCM HTTP v1's error body (`error.status`, `error.details[]` with
/// `google.firebase.fcm.v1.FcmError.errorCode` and `google.rpc.BadRequest.fieldViolations`), the
/// HTTP status and `Retry-After`, or from a transport failure. See ``Kind`` for the actions.
public struct FCMError: Error, Sendable, CustomStringConvertible {
    /// What the caller should do.
    public enum Kind: String, Sendable {
        /// Try again after a backoff (UNAVAILABLE, INTERNAL, transport errors, timeouts).
        case retryable
        /// A sending quota is exhausted (HTTP 429, QUOTA_EXCEEDED / RESOURCE_EXHAUSTED): the
        /// project's (pause *all* sends, at least 60 s), one device's or one topic's (back off
        /// that target only). ``quotaScope`` says which.
        case quota
        /// The device identifier (token or FID) is dead or not ours: report it for deletion
        /// (UNREGISTERED, SENDER_ID_MISMATCH, INVALID_ARGUMENT about the token).
        case tokenDead
        /// The message cannot succeed: dead-letter it (INVALID_ARGUMENT about the payload,
        /// THIRD_PARTY_AUTH_ERROR, and anything unknown).
        case permanent
        /// The access token was refused: refresh it once, then retry (UNAUTHENTICATED).
        case auth
        /// Nothing can be sent until the operator fixes the setup: the server's certificate is
        /// not trusted, or the token endpoint refuses the service account. Not the message's
        /// fault, so not a reason to dead-letter it.
        case configuration
    }

    /// FCM's error code (`details[].errorCode`, else `error.status`), e.g. ``Code/unregistered``;
    /// for failures without an answer ours, e.g. ``Code/timeout``.
    public var code: Code
    public var kind: Kind
    /// The HTTP status, or nil for a transport failure.
    public var httpStatus: Int?
    /// FCM's (or curl's) message.
    public var message: String
    /// `BadRequest` field violations: (field, description).
    public var fieldViolations: [FieldViolation]
    /// From `Retry-After`, when the server sent one.
    public var retryAfter: Duration?
    /// For ``Kind/quota``: whose quota ran out, as far as the answer says.
    public var quotaScope: QuotaScope?

    /// The three causes of QUOTA_EXCEEDED in FCM's ErrorCode reference, and what to do about each.
    public enum QuotaScope: String, Sendable, CaseIterable {
        /// The project's message rate (600k/min by default): pause every send, at least 60 s.
        case project
        /// One device's message rate (240/min, 5,000/h): back off sends to that device only.
        case device
        /// One topic's message rate: back off sends to that topic only, at least 60 s.
        case topic
        /// The answer does not say. The client decides from what it sees: while sends to other
        /// targets succeed, the limit is the target's; otherwise the project's.
        case undetermined
    }

    public struct FieldViolation: Sendable, Equatable {
        public var field: String
        public var description: String

        public init(field: String, description: String) {
            self.field = field
            self.description = description
        }
    }

    public init(
        code: Code, kind: Kind, httpStatus: Int?, message: String,
        fieldViolations: [FieldViolation] = [], retryAfter: Duration? = nil, quotaScope: QuotaScope? = nil
    ) {
        self.code = code
        self.kind = kind
        self.httpStatus = httpStatus
        self.message = message
        self.fieldViolations = fieldViolations
        self.retryAfter = retryAfter
        self.quotaScope = quotaScope ?? (kind == .quota ? .undetermined : nil)
    }

    /// The token should be deleted by the backend (a token-invalidation record).
    public var invalidatesToken: Bool { kind == .tokenDead }

    /// Whether the same send may succeed later (after backoff, a quota pause or a token refresh).
    public var isRetryable: Bool { kind == .retryable || kind == .quota || kind == .auth }

    /// A failure with no HTTP response (`TRANSPORT`, `TIMEOUT`, `TLS`, `PROXY`, `SHUTDOWN`).
    ///
    /// Never ``Kind/permanent``: no answer says nothing about the message, so dead-lettering it
    /// would punish a good push for a network fault. An untrusted certificate, a malformed
    /// endpoint URL or an egress proxy that refuses the destination or the credentials is the
    /// operator's to fix (``Kind/configuration``); anything else, however curl names it (a proxy
    /// that is down included), is retried within the budget. A send cut short by shutdown would
    /// succeed later, from this worker or another.
    public init(transport error: HTTP2ClientError) {
        let code: Code =
            switch error.code {
            case .timeout: .timeout
            case .deadConnection: .deadConnection
            case .tls: .tls
            case .proxy: .proxy
            case .shutdown: .shutdown
            default: .transport
            }
        let isSetup = !error.isRetryable && [.tls, .invalidRequest, .proxy].contains(error.code)
        self.init(code: code, kind: isSetup ? .configuration : .retryable, httpStatus: nil, message: error.message)
    }

    /// The send was not made because its task was cancelled (the worker is stopping). Like a
    /// send cut short by ``FCMClient/shutdown()``, it would succeed later.
    public static let cancelled = FCMError(code: .shutdown, kind: .retryable, httpStatus: nil, message: "cancelled: the worker is stopping")

    /// The send's deadline passed before an attempt could start (`previous`: the last attempt's
    /// failure, if one was made). Retryable: it says nothing of the message, and no answer came.
    static func pastDeadline(after previous: FCMError?) -> FCMError {
        let message =
            previous.map { "the send's deadline passed before another attempt; the last: \($0)" }
            ?? "the send's deadline passed before its first attempt"
        return FCMError(code: .deadline, kind: .retryable, httpStatus: nil, message: message)
    }

    /// The send was cut short or not made because the client or its task is stopping: not the
    /// message's fault, and not worth another attempt from this worker.
    public var isShutdown: Bool { code == .shutdown }

    public var description: String {
        var s = "FCM \(code)"
        if let httpStatus { s += " (HTTP \(httpStatus))" }
        if let quotaScope, quotaScope != .undetermined { s += " [\(quotaScope.rawValue) quota]" }
        s += ": \(message)"
        if !fieldViolations.isEmpty {
            s += " [" + fieldViolations.map { "\($0.field): \($0.description)" }.joined(separator: "; ") + "]"
        }
        return s
    }
}
