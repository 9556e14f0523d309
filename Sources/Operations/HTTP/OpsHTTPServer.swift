import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The worker's operating endpoint, plain HTTP/1.1 (scraped inside the cluster):
/// - `GET /metrics`: Prometheus text format;
/// - `GET /healthz`: 200 while the process runs;
/// - `GET /readyz`: 200 with the reason when ready, 503 with the reason when not.
///
/// A swift-service-lifecycle `Service`: ``run()`` serves until graceful shutdown.
public final class OpsHTTPServer: Service, Sendable {
    public typealias Readiness = @Sendable () -> (ready: Bool, reason: String)

    let host: String
    let port: Int
    let metrics: @Sendable () -> [UInt8]
    let readiness: Readiness
    private let state = Mutex<(group: MultiThreadedEventLoopGroup?, channel: (any Channel)?)>((nil, nil))

    /// - Parameters:
    ///   - port: 0 picks a free port; see ``boundPort``.
    ///   - metrics: the exposition text, rendered per scrape.
    public init(host: String, port: Int, metrics: @escaping @Sendable () -> [UInt8], readiness: @escaping Readiness) {
        self.host = host
        self.port = port
        self.metrics = metrics
        self.readiness = readiness
    }

    /// The port listened on, once started.
    public var boundPort: Int? {
        state.withLock { $0.channel?.localAddress?.port }
    }

    /// Binds and starts serving in the background.
    public func start() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let metrics = self.metrics
        let readiness = self.readiness
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(OpsHTTPHandler(metrics: metrics, readiness: readiness))
                    }
                }
            }
        do {
            let channel = try await bootstrap.bind(host: host, port: port).get()
            state.withLock { $0 = (group, channel) }
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    public func stop() async {
        let (group, channel) = state.withLock { s in
            defer { s = (nil, nil) }
            return s
        }
        try? await channel?.close()
        try? await group?.shutdownGracefully()
    }

    /// Serves until graceful shutdown (or cancellation).
    public func run() async throws {
        if state.withLock({ $0.channel == nil }) { try await start() }
        try? await gracefulShutdown()
        await stop()
    }
}

/// One connection: answers each request by path.
final class OpsHTTPHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let metrics: @Sendable () -> [UInt8]
    let readiness: OpsHTTPServer.Readiness

    init(metrics: @escaping @Sendable () -> [UInt8], readiness: @escaping OpsHTTPServer.Readiness) {
        self.metrics = metrics
        self.readiness = readiness
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        let keepAlive = head.isKeepAlive
        let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
        guard head.method == .GET || head.method == .HEAD else {
            respond(context, status: .methodNotAllowed, body: Array("only GET\n".utf8), keepAlive: keepAlive)
            return
        }
        switch path {
        case "/metrics":
            respond(context, status: .ok, body: metrics(), contentType: "text/plain; version=0.0.4; charset=utf-8", keepAlive: keepAlive)
        case "/healthz":
            respond(context, status: .ok, body: Array("ok\n".utf8), keepAlive: keepAlive)
        case "/readyz":
            let answer = readiness()
            respond(context, status: answer.ready ? .ok : .serviceUnavailable, body: Array((answer.reason + "\n").utf8), keepAlive: keepAlive)
        default:
            respond(context, status: .notFound, body: Array("not found: try /metrics, /healthz or /readyz\n".utf8), keepAlive: keepAlive)
        }
    }

    private func respond(
        _ context: ChannelHandlerContext, status: HTTPResponseStatus, body: [UInt8], contentType: String = "text/plain; charset=utf-8",
        keepAlive: Bool
    ) {
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: contentType)
        headers.add(name: "content-length", value: String(body.count))
        if !keepAlive { headers.add(name: "connection", value: "close") }
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        let done = context.writeAndFlush(wrapOutboundOut(.end(nil)))
        if !keepAlive {
            let channel = context.channel
            done.whenComplete { _ in channel.close(promise: nil) }
        }
    }
}
