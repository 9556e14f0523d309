extension FCMError {
    /// An error code: FCM's own, as its answer names it (`details[].errorCode`, else
    /// `error.status`), or one of ours for a failure FCM did not answer. A struct, not an enum:
    /// FCM may name codes this version does not know, and they must reach dead-letter records
    /// as FCM spelled them. Compare with the constants, never with strings.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code as FCM spells it (`UNREGISTERED`), or ours (`TIMEOUT`).
        public let name: String

        /// A code as an FCM answer names it.
        public init(fcm name: String) { self.name = name }

        public var description: String { name }

        // FCM's (the ErrorCode reference of HTTP v1, and the google.rpc statuses it answers with).

        public static let invalidArgument = Code(fcm: "INVALID_ARGUMENT")
        public static let unregistered = Code(fcm: "UNREGISTERED")
        public static let senderIDMismatch = Code(fcm: "SENDER_ID_MISMATCH")
        public static let quotaExceeded = Code(fcm: "QUOTA_EXCEEDED")
        /// The project quota's status (its answer carries no `FcmError`); classified as
        /// ``quotaExceeded``.
        public static let resourceExhausted = Code(fcm: "RESOURCE_EXHAUSTED")
        public static let unavailable = Code(fcm: "UNAVAILABLE")
        public static let `internal` = Code(fcm: "INTERNAL")
        public static let thirdPartyAuthError = Code(fcm: "THIRD_PARTY_AUTH_ERROR")
        public static let unauthenticated = Code(fcm: "UNAUTHENTICATED")
        public static let permissionDenied = Code(fcm: "PERMISSION_DENIED")
        public static let notFound = Code(fcm: "NOT_FOUND")

        // Ours, for failures without an FCM answer.

        /// The connection failed or broke before an answer.
        public static let transport = Code(fcm: "TRANSPORT")
        /// The send's connection received nothing for the liveness timeout while sends waited
        /// (``HTTP2/HTTP2ClientError/Code/deadConnection``): closed as dead. Sent again at once on
        /// another connection, counting against neither the retry budget nor the attempts.
        public static let deadConnection = Code(fcm: "DEAD_CONNECTION")
        /// No answer within the request timeout.
        public static let timeout = Code(fcm: "TIMEOUT")
        /// The egress proxy could not be found, or refused the tunnel to FCM or the token endpoint.
        public static let proxy = Code(fcm: "PROXY")
        /// The TLS handshake failed (an untrusted certificate).
        public static let tls = Code(fcm: "TLS")
        /// The client or the send's task is stopping.
        public static let shutdown = Code(fcm: "SHUTDOWN")
        /// The send's deadline passed before it could be made, or made again: no attempt starts
        /// after it (``FCMClient/send(_:to:validateOnly:recordingAttempts:deadline:)``).
        public static let deadline = Code(fcm: "DEADLINE")
        /// No access token: the token endpoint failed or refused the service account.
        public static let tokenExchange = Code(fcm: "TOKEN_EXCHANGE")

        /// For an answer with neither an FCM code nor a status: what the HTTP status stands for.
        static func forHTTPStatus(_ status: Int) -> Code {
            switch status {
            case 400: .invalidArgument
            case 401: .unauthenticated
            case 403: .permissionDenied
            case 404: .notFound
            case 429: .quotaExceeded
            case 500: .internal
            case 503: .unavailable
            default: Code(fcm: "HTTP_\(status)")
            }
        }
    }
}
