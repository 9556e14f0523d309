import Synchronization
import Threading

/// An HTTP/2 client over libcurl's multi interface: many concurrent requests multiplexed as
/// streams on one TLS connection (ALPN `h2`), or on a few (``Configuration/connections``).
///
/// Each connection has its own libcurl multi handle and dedicated thread; any task may call
/// ``send(_:)``, which picks the connection with the fewest requests. At most
/// ``Configuration/maxConcurrentStreams`` requests are on the wire per connection; the rest
/// wait in that connection's FIFO. TLS verification is always on.
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
        /// Connections per host within one multi handle. Default 1: everything is multiplexed
        /// on one connection.
        public var maxConnectionsPerHost: Int = 1
        /// Independent connections, each with its own thread: a server's stream limit and one
        /// thread's CPU then bound each of them, not the client. Default 1.
        public var connections: Int = 1

        public init(caFile: String? = nil) {
            self.caFile = caFile
        }
    }

    public let configuration: Configuration
    private let loops: [CurlMultiLoop]
    /// Where the search for the least busy connection starts, turning so that ties spread.
    private let turn = Atomic<Int>(0)

    /// Starts the client's threads, one per connection.
    /// - Throws: ``HTTP2ClientError`` if libcurl cannot be initialised.
    public init(configuration: Configuration = .init()) throws(HTTP2ClientError) {
        self.configuration = configuration
        var loops: [CurlMultiLoop] = []
        do {
            for _ in 0..<max(configuration.connections, 1) {
                loops.append(try CurlMultiLoop(configuration: configuration))
            }
        } catch {
            for loop in loops { loop.requestShutdown() }  // their threads would run on otherwise
            throw error
        }
        self.loops = loops
    }

    deinit {
        for loop in loops { loop.requestShutdown() }
    }

    /// Sends a request and returns the complete response, whatever its status.
    /// - Throws: ``HTTP2ClientError`` when no response arrived: see its `code` and `isRetryable`.
    public func send(_ request: HTTPRequest) async throws(HTTP2ClientError) -> HTTPResponse {
        let loop = leastBusy()
        loop.requests.add(1, ordering: .relaxed)
        defer { loop.requests.subtract(1, ordering: .relaxed) }
        let result = await withCheckedContinuation { continuation in
            loop.submit(CurlTransfer(request: request, continuation: continuation))
        }
        return try result.get().response
    }

    /// Fails everything pending or in flight with `.shutdown` and stops the threads. Idempotent.
    public func shutdown() async {
        for loop in loops { await loop.shutdown() }
    }

    private func leastBusy() -> CurlMultiLoop {
        guard loops.count > 1 else { return loops[0] }
        let start = turn.add(1, ordering: .relaxed).newValue
        var best = loops[start % loops.count]
        var fewest = best.requests.load(ordering: .relaxed)
        for i in 1..<loops.count where fewest > 0 {
            let loop = loops[(start + i) % loops.count]
            let requests = loop.requests.load(ordering: .relaxed)
            if requests < fewest { (best, fewest) = (loop, requests) }
        }
        return best
    }
}
