/// A request that got no HTTP response: a transport failure, timeout, TLS failure or shutdown.
///
/// An HTTP error status is not an error here: it comes back as an ``HTTPResponse``.
public struct HTTP2ClientError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, opaque so that cases can be added.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        public var description: String { name }

        /// No response within the request's timeout.
        public static let timeout = Code(name: "timeout")
        /// The server could not be reached.
        public static let couldNotConnect = Code(name: "couldNotConnect")
        /// The egress proxy could not be found, or refused to open a tunnel to the server
        /// (its `CONNECT` answer is in the message). Retryable unless it refused the destination
        /// (403) or the credentials (407, or 401 as some proxies answer): then the proxy's
        /// settings need fixing.
        public static let proxy = Code(name: "proxy")
        /// TLS failed, e.g. the server's certificate is not signed by a trusted CA.
        public static let tls = Code(name: "tls")
        /// The connection broke or the server reset the stream before the response was complete.
        public static let connectionClosed = Code(name: "connectionClosed")
        /// The request was on a connection that received nothing for the client's
        /// ``HTTP2Client/Configuration/livenessTimeout`` while requests waited on it: judged dead
        /// and closed (``DeadConnection``). Nothing says the server saw the request; sending it
        /// again goes on another connection. Retryable.
        public static let deadConnection = Code(name: "deadConnection")
        /// The client was shut down before the request completed.
        public static let shutdown = Code(name: "shutdown")
        /// The request itself is malformed (e.g. a bad URL).
        public static let invalidRequest = Code(name: "invalidRequest")
        public static let other = Code(name: "other")
    }

    public let code: Code
    /// curl's message (its error buffer, else `curl_easy_strerror`).
    public let message: String
    /// curl's `CURLcode`, or -1 for errors raised by the client itself.
    public let curlCode: Int32
    /// Whether sending the same request again may succeed.
    public let isRetryable: Bool

    public init(code: Code, message: String, curlCode: Int32 = -1, isRetryable: Bool) {
        self.code = code
        self.message = message
        self.curlCode = curlCode
        self.isRetryable = isRetryable
    }

    public var description: String {
        "HTTP2ClientError(\(code)\(isRetryable ? ", retryable" : ""), curl \(curlCode)): \(message)"
    }

    /// A request on a connection judged dead (``Code/deadConnection``), to `authority`, through
    /// `proxy` if there is one. Both engines' words.
    static func deadConnection(to authority: String, through proxy: HTTPProxy? = nil) -> HTTP2ClientError {
        HTTP2ClientError(
            code: .deadConnection,
            message:
                "the connection to \(authority)\(proxy.map { " through the egress proxy \($0)" } ?? "") received nothing while requests waited: closed as dead",
            isRetryable: true)
    }

    static let shutdownError = HTTP2ClientError(
        code: .shutdown, message: "the HTTP/2 client was shut down before the request completed", isRetryable: false)
}
