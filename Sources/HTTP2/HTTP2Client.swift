import Threading

/// An HTTP/2 client over libcurl's multi interface: many concurrent requests multiplexed as
/// streams on one TLS connection (ALPN `h2`).
///
/// One dedicated thread drives all transfers; any task may call ``send(_:)``. At most
/// ``Configuration/maxConcurrentStreams`` requests are on the wire at once; the rest wait in a
/// FIFO. TLS verification is always on.
///
/// Call ``shutdown()`` when done: pending and in-flight requests fail with `.shutdown`.
public final class HTTP2Client: Sendable {
    /// Connection and request settings, with defaults for FCM.
    public struct Configuration: Sendable {
        /// A PEM file of CA certificates to trust instead of the system's (e.g. a test CA).
        public var caFile: String?
        /// Time allowed to connect, TLS included. Default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// Time allowed for a whole request, unless the request sets its own. Default 30 s.
        public var requestTimeout: Duration = .seconds(30)
        /// Requests on the wire at once (HTTP/2 streams). Default 100.
        public var maxConcurrentStreams: Int = 100
        /// Connections per host. Default 1: everything is multiplexed on one connection.
        public var maxConnectionsPerHost: Int = 1

        public init(caFile: String? = nil) {
            self.caFile = caFile
        }
    }

    public let configuration: Configuration
    private let loop: CurlMultiLoop

    /// Starts the client's thread.
    /// - Throws: ``HTTP2ClientError`` if libcurl cannot be initialised.
    public init(configuration: Configuration = .init()) throws(HTTP2ClientError) {
        self.configuration = configuration
        self.loop = try CurlMultiLoop(configuration: configuration)
    }

    deinit {
        loop.requestShutdown()
    }

    /// Sends a request and returns the complete response, whatever its status.
    /// - Throws: ``HTTP2ClientError`` when no response arrived: see its `code` and `isRetryable`.
    public func send(_ request: HTTPRequest) async throws(HTTP2ClientError) -> HTTPResponse {
        let result = await withCheckedContinuation { continuation in
            loop.submit(CurlTransfer(request: request, continuation: continuation))
        }
        return try result.get().response
    }

    /// Fails everything pending or in flight with `.shutdown` and stops the thread. Idempotent.
    public func shutdown() async {
        await loop.shutdown()
    }
}
