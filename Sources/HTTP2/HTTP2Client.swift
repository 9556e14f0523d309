import Foundation
import Synchronization
import Threading

/// A connection the client judged dead and closed (``HTTP2Client/Configuration/livenessTimeout``).
public struct DeadConnection: Sendable, CustomStringConvertible {
    /// The server's `host:port`, as the requests named it.
    public var authority: String
    /// The requests that were waiting on it, each failed with ``HTTP2ClientError/Code/deadConnection``.
    public var requests: Int
    /// How long it had received nothing.
    public var silentFor: Duration

    public var description: String {
        "the connection to \(authority) received nothing for \(silentFor.components.seconds) s with \(requests) requests waiting: closed as dead"
    }
}

/// An HTTP/2 client: many concurrent requests multiplexed as streams on TLS connections (ALPN
/// `h2`), as many connections as the requests in flight need, over one of two engines
/// (``Configuration/engine``): libcurl's multi interface, or our own over nghttp2 and OpenSSL.
///
/// Connections follow streams: a connection carries ``Configuration/maxConcurrentStreams``
/// requests at once (or fewer, if the server says so), and the engine opens another only when
/// every stream of the open ones is busy, up to ``Configuration/maxConnections``; a connection
/// idle for ``Configuration/idleConnectionTimeout`` is closed. Threads follow CPUs: one
/// dedicated thread per ``Configuration/threads`` drives its share of the connections, however
/// many there are. A request goes to the least busy thread with a free stream, else to the one
/// with the fewest connections (``ThreadChoice``), so light traffic stays on one connection and
/// heavy traffic is shared evenly by the threads.
///
/// Any task may call ``send(_:)``. TLS verification is always on. Call ``shutdown()`` when done:
/// pending and in-flight requests fail with `.shutdown`.
public final class HTTP2Client: Sendable {
    /// Connection and request settings, with defaults for FCM.
    public struct Configuration: Sendable {
        /// A PEM file of CA certificates to trust instead of the system's (e.g. a test CA).
        public var caFile: String?
        /// Time allowed to connect, TLS included. Default 10 s.
        public var connectTimeout: Duration = .seconds(10)
        /// Time allowed for a whole request, unless the request sets its own. Default 30 s.
        public var requestTimeout: Duration = .seconds(30)
        /// Requests on one connection at once (HTTP/2 streams). Default 100, what FCM allows.
        public var maxConcurrentStreams: Int = 100
        /// Connections at most, over all threads. Default 64: at 100 streams each, 6,400
        /// requests in flight, 10,000 sends/s at 640 ms answers.
        public var maxConnections: Int = 64
        /// Threads driving the connections. Default: one per CPU, at most 4.
        public var threads: Int = HTTP2Client.defaultThreads
        /// A connection idle this long is closed. Default 60 s.
        public var idleConnectionTimeout: Duration = .seconds(60)
        /// How long a frame written to a connection may wait at most for the frames of other
        /// requests, so that they leave in one TCP segment (the sockets are corked, and flushed
        /// a tenth of the answer time after libcurl first wrote to them, up to this): fewer
        /// packets cost the sender and the server less CPU per request (``WriteFlushSchedule``).
        /// Answers under 50 ms are not held. Default 10 ms; `.zero` sends each frame at once.
        public var writeHold: Duration = .milliseconds(10)
        /// The egress proxy every connection goes through; nil: direct, whatever `HTTPS_PROXY`
        /// says (libcurl's reading of the environment is turned off).
        public var proxy: HTTPProxy?
        /// A connection with a request waiting that receives nothing at all for this long is
        /// judged dead and closed: its requests fail with ``HTTP2ClientError/Code/deadConnection``
        /// (retryable; sent again, they go on another connection) and no request is given to it
        /// again. A path that died without a word (a NAT or load balancer that forgot the
        /// connection, a silent proxy tunnel) costs this long instead of the kernel's ~15 minutes
        /// (``ConnectionLiveness``). A request timing out on a connection that received nothing
        /// since it was sent has the same effect. Default 10 s; `.zero` turns it off.
        public var livenessTimeout: Duration = .seconds(10)
        /// Told of each connection judged dead, once, on the client's own thread: it must be
        /// quick (log it, count it).
        public var onDeadConnection: (@Sendable (DeadConnection) -> Void)?
        /// What drives the connections. Default `.libcurl`.
        public var engine: Engine = .libcurl

        public init(caFile: String? = nil) {
            self.caFile = caFile
        }
    }

    /// What drives an ``HTTP2Client``'s connections.
    public enum Engine: String, Sendable, CaseIterable {
        /// libcurl's multi interface: any URL libcurl takes, egress proxies, HTTP/1.1 servers.
        case libcurl
        /// Our own over nghttp2 and OpenSSL (``NativeLoop``): `https://` HTTP/2 servers only, no
        /// proxy; a turn's frames leave in one TLS record, at a fraction of libcurl 7.88's CPU
        /// per request (docs/benchmarks.md). ``Configuration/writeHold`` does not apply.
        case nghttp2
    }

    /// One per CPU this process may use, at most 4: each thread drives up to about one core.
    public static var defaultThreads: Int { min(max(ProcessInfo.processInfo.activeProcessorCount, 1), 4) }

    public let configuration: Configuration
    /// The threads: libcurl's, or the nghttp2 engine's (``Configuration/engine``); the other is empty.
    private let loops: [CurlMultiLoop]
    private let nativeLoops: [NativeLoop]
    /// The rate of paced requests, shared by the threads.
    private let pacer = RequestPacer()

    /// Starts the client's threads.
    /// - Throws: ``HTTP2ClientError`` if libcurl or the TLS settings cannot be initialised (a CA
    ///   file that does not load), or the nghttp2 engine is asked to use a proxy.
    public init(configuration: Configuration = .init()) throws(HTTP2ClientError) {
        self.configuration = configuration
        let maxConnections = max(configuration.maxConnections, 1)
        let threads = min(max(configuration.threads, 1), maxConnections)
        // The connections split as evenly as they go: 64 over 3 threads is 22, 21, 21.
        let shares = (0..<threads).map { maxConnections / threads + ($0 < maxConnections % threads ? 1 : 0) }
        var loops: [CurlMultiLoop] = []
        var nativeLoops: [NativeLoop] = []
        do throws(HTTP2ClientError) {
            switch configuration.engine {
            case .libcurl:
                for share in shares { loops.append(try CurlMultiLoop(configuration: configuration, maxConnections: share, pacer: pacer)) }
            case .nghttp2:
                if let proxy = configuration.proxy {
                    throw HTTP2ClientError(
                        code: .invalidRequest, message: "the nghttp2 engine connects directly: it cannot go through the egress proxy \(proxy)",
                        isRetryable: false)
                }
                for share in shares { nativeLoops.append(try NativeLoop(configuration: configuration, maxConnections: share, pacer: pacer)) }
            }
        } catch {
            for loop in loops { loop.requestShutdown() }  // their threads would run on otherwise
            for loop in nativeLoops { loop.requestShutdown() }
            throw error
        }
        self.loops = loops
        self.nativeLoops = nativeLoops
    }

    deinit {
        for loop in loops { loop.requestShutdown() }
        for loop in nativeLoops { loop.requestShutdown() }
    }

    /// Sends a request and returns the complete response, whatever its status.
    /// - Throws: ``HTTP2ClientError`` when no response arrived: see its `code` and `isRetryable`.
    public func send(_ request: HTTPRequest) async throws(HTTP2ClientError) -> HTTPResponse {
        let result = await withCheckedContinuation { continuation in
            start(request) { continuation.resume(returning: $0) }
        }
        // Headers parsed when read (HTTPResponse.headers), in the caller's task, not on the
        // client's busy thread.
        return try result.get()
    }

    /// Sends a request without waiting for it: `completion` gets the response, whatever its
    /// status, or the error that stood for one, as ``send(_:)`` would.
    ///
    /// For callers that keep thousands of requests in flight: nothing waits while the server
    /// answers, where a suspended task per request would hold its whole call chain's frames
    /// (docs/benchmarks.md).
    ///
    /// - Important: `completion` runs on the client's own thread, which drives every connection
    ///   it has: it must be quick and must not block (hand longer work to a task).
    public func start(_ request: HTTPRequest, completion: @escaping @Sendable (Result<HTTPResponse, HTTP2ClientError>) -> Void) {
        if !nativeLoops.isEmpty {
            let loop = choose(nativeLoops) {
                .init(connections: $0.openConnections.load(ordering: .relaxed), requests: $0.requests.load(ordering: .relaxed))
            }
            return loop.submit(request, completion: completion)
        }
        let loop = choose(loops) { .init(connections: $0.connections.open.load(ordering: .relaxed), requests: $0.requests.load(ordering: .relaxed)) }
        loop.requests.add(1, ordering: .relaxed)
        loop.submit(
            CurlTransfer(request: request) { result in
                loop.requests.subtract(1, ordering: .relaxed)
                completion(result.map(\.response))
            })
    }

    /// Fails everything pending or in flight with `.shutdown` and stops the threads. Idempotent.
    public func shutdown() async {
        for loop in loops { await loop.shutdown() }
        for loop in nativeLoops { await loop.shutdown() }
    }

    /// Holds requests marked ``HTTPRequest/paced`` to `perSecond` from now on, over all threads,
    /// as they go on the wire: evenly spaced, at most 20 ms worth at once after a quiet spell
    /// (``RateSchedule``). nil (or zero): no rate. Requests not marked paced never wait.
    public func setRate(_ perSecond: Double?) {
        pacer.setRate(perSecond)
    }

    /// The rate paced requests are held to, if any.
    public var rate: Double? { pacer.perSecond }

    /// Connections open now.
    public var openConnections: Int {
        loops.reduce(0) { $0 + $1.connections.open.load(ordering: .relaxed) }
            + nativeLoops.reduce(0) { $0 + $1.openConnections.load(ordering: .relaxed) }
    }

    /// Connections opened since the client started.
    public var connectionsOpened: Int {
        loops.reduce(0) { $0 + $1.connections.opened.load(ordering: .relaxed) }
            + nativeLoops.reduce(0) { $0 + $1.connectionsOpened.load(ordering: .relaxed) }
    }

    /// The thread of `loops` (either engine's) to take a request (``ThreadChoice``), from each
    /// one's `load`.
    private func choose<Loop>(_ loops: [Loop], load: (Loop) -> ThreadChoice.Load) -> Loop {
        if loops.count == 1 { return loops[0] }
        var choice = ThreadChoice(streamsPerConnection: configuration.maxConcurrentStreams)
        for (i, loop) in loops.enumerated() { choice.consider(i, load(loop)) }
        return loops[choice.chosen]
    }

    /// Connections judged dead and closed since the client started (``Configuration/livenessTimeout``).
    public var deadConnectionsClosed: Int {
        loops.reduce(0) { $0 + $1.deadConnections.load(ordering: .relaxed) }
            + nativeLoops.reduce(0) { $0 + $1.deadConnections.load(ordering: .relaxed) }
    }

    /// The corked sockets of every thread's connections (for tests).
    var corkedSockets: [Int32] { loops.flatMap(\.connections.corkedNow) }

    /// Flushes of corked sockets so far, over every thread (for tests).
    var writeFlushes: Int { loops.reduce(0) { $0 + $1.connections.flushes.load(ordering: .relaxed) } }

    /// Requests in flight on each thread, in order (for tests and diagnostics).
    var requestsPerThread: [Int] { loops.map { $0.requests.load(ordering: .relaxed) } + nativeLoops.map { $0.requests.load(ordering: .relaxed) } }

    /// Easy handles each thread keeps for reuse, in order.
    var pooledHandlesPerThread: [Int] { loops.map { $0.pooledHandles.load(ordering: .relaxed) } }

    /// Connections open on each thread, in order.
    var connectionsPerThread: [Int] {
        loops.map { $0.connections.open.load(ordering: .relaxed) } + nativeLoops.map { $0.openConnections.load(ordering: .relaxed) }
    }
}
