import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOPosix
import NIOSSL

/// The emulator's network side: HTTPS on loopback, HTTP/2 by ALPN (HTTP/1.1 too, for `curl`
/// by hand), each request handed to ``EmulatorCore``.
final class EmulatorServer: Sendable {
    let channel: Channel
    let group: MultiThreadedEventLoopGroup

    /// NIO's DoS heuristics are stricter than Google's front ends. With NIO's defaults, more
    /// than 200 RST_STREAM frames in 30 s (curl 7.88 resets each finished stream under load)
    /// kill the connection, and every request in flight on it is retried: duplicates that FCM
    /// itself does not cause. So the emulator tolerates what a busy client does.
    static var connectionConfiguration: NIOHTTP2Handler.ConnectionConfiguration {
        var c = NIOHTTP2Handler.ConnectionConfiguration()
        // FCM's front end allows 100 streams per connection: firebase-admin-java's
        // ApacheHttp2Transport and firebase-admin-node's Http2SessionHandler set 100 "to match
        // the concurrent stream limit of the FCM backend".
        c.initialSettings = [
            HTTP2Setting(parameter: .maxConcurrentStreams, value: maxConcurrentStreams),
            HTTP2Setting(parameter: .maxHeaderListSize, value: 16_384),  // NIO's default
        ]
        c.maximumSequentialEmptyDataFrames = 1_000_000
        c.maximumConnectionGlitches = 1_000_000
        c.maximumRecentlyResetStreams = 100_000
        return c
    }

    /// `SETTINGS_MAX_CONCURRENT_STREAMS`, as FCM's front end.
    static let maxConcurrentStreams = 100

    static var streamConfiguration: NIOHTTP2Handler.StreamConfiguration {
        var c = NIOHTTP2Handler.StreamConfiguration()
        c.streamResetFrameRateLimit.maximumCount = 1_000_000
        c.streamErrorRateLimit.maximumCount = 1_000_000
        return c
    }

    static func start(host: String, port: Int, tls: NIOSSLContext, core: EmulatorCore, threads: Int) async throws -> EmulatorServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls))
                }.flatMap {
                    channel.configureHTTP2SecureUpgrade(
                        h2ChannelConfigurator: { connection in
                            let served = EmulatorConnection(channel: connection, core: core)
                            do {
                                try connection.pipeline.syncOperations.addHandler(GoAwayAnnouncer())
                            } catch {
                                return connection.eventLoop.makeFailedFuture(error)
                            }
                            return connection.configureHTTP2Pipeline(
                                mode: .server, connectionConfiguration: Self.connectionConfiguration,
                                streamConfiguration: Self.streamConfiguration,
                                inboundStreamInitializer: { stream in
                                    stream.eventLoop.makeCompletedFuture {
                                        try stream.pipeline.syncOperations.addHandlers([
                                            StreamRefuser(), HTTP2FramePayloadToHTTP1ServerCodec(),
                                            EmulatorHTTPHandler(core: core, connection: served, isHTTP2: true),
                                        ])
                                    }
                                }
                            ).flatMapThrowing { _ in
                                try connection.pipeline.syncOperations.addHandler(RetirementPingWatcher(connection: served))
                            }
                        },
                        http1ChannelConfigurator: { connection in
                            connection.pipeline.configureHTTPServerPipeline().flatMap {
                                connection.eventLoop.makeCompletedFuture {
                                    let served = EmulatorConnection(channel: connection, core: core)
                                    try connection.pipeline.syncOperations.addHandler(
                                        EmulatorHTTPHandler(core: core, connection: served, isHTTP2: false))
                                }
                            }
                        })
                }
            }
        do {
            let channel = try await bootstrap.bind(host: host, port: port).get()
            return EmulatorServer(channel: channel, group: group)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    private init(channel: Channel, group: MultiThreadedEventLoopGroup) {
        self.channel = channel
        self.group = group
    }

    var port: Int { channel.localAddress?.port ?? 0 }

    func stop() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

/// One request per stream (HTTP/2) or per exchange (HTTP/1.1): collects it, asks the core,
/// answers after any injected latency, and retires or drops the connection when told to.
final class EmulatorHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let core: EmulatorCore
    private let connection: EmulatorConnection
    private let isHTTP2: Bool
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []
    /// The request is counted open on the connection (from its stream's opening over HTTP/2,
    /// its head over HTTP/1.1) until its answer is written out, it is refused, or its stream is
    /// reset before an answer.
    private var counted = false
    /// Its answer is being written: the request ends when that write completes (the stream
    /// closes before, as its last frame goes out).
    private var answering = false
    /// Refused unprocessed (its stream is above a final GOAWAY's last stream): the rest of it
    /// is ignored.
    private var refused = false

    init(core: EmulatorCore, connection: EmulatorConnection, isHTTP2: Bool) {
        self.core = core
        self.connection = connection
        self.isHTTP2 = isHTTP2
    }

    /// An HTTP/2 stream's handler is added as NIO opens the stream, in order with the frames
    /// NIO passes to the connection (``RetirementPingWatcher``): the request counts from here.
    func handlerAdded(context: ChannelHandlerContext) {
        guard isHTTP2 else { return }
        let streamID = (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)).map { Int($0) }
        counted = connection.requestBegan(streamID: streamID)
        // NIO already ignores the HEADERS of streams above the last stream of a GOAWAY it
        // sent; should one get through, it is refused when its head arrives, never processed.
        refused = !counted
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            if refused {
                _ = refuse(context: context)
                return
            }
            if !isHTTP2 { counted = connection.requestBegan(streamID: nil) }
            answering = false
            head = h
            body = []
        case .body(var buffer):
            guard !refused else { return }
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            self.head = nil
            let request = EmulatorRequest(
                method: head.method.rawValue, path: head.uri, headers: head.headers.map { ($0.name, $0.value) }, body: body)
            let response = core.handle(request)
            if response.refuseStream, refuse(context: context) {
                requestEnded()
                return
            }
            if response.delayMilliseconds > 0 {
                context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(response.delayMilliseconds))) {
                    self.respond(context: context, response, keepAlive: head.isKeepAlive)
                }
            } else {
                respond(context: context, response, keepAlive: head.isKeepAlive)
            }
        }
    }

    /// The stream closed: a request reset before its answer is no longer open.
    func channelInactive(context: ChannelHandlerContext) {
        if !answering { requestEnded() }
        context.fireChannelInactive()
    }

    private func requestEnded() {
        guard counted else { return }
        counted = false
        connection.requestEnded()
    }

    /// Resets the stream with REFUSED_STREAM; false over HTTP/1.1, which has no such answer.
    private func refuse(context: ChannelHandlerContext) -> Bool {
        guard let refuser = try? context.pipeline.syncOperations.handler(type: StreamRefuser.self) else { return false }
        refuser.refuse()
        return true
    }

    private func respond(context: ChannelHandlerContext, _ response: EmulatorResponse, keepAlive: Bool) {
        var headers = HTTPHeaders(response.headers)
        headers.add(name: "content-length", value: String(response.body.count))
        let version: HTTPVersion = isHTTP2 ? .http2 : .http1_1
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .init(statusCode: response.status), headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        let done = context.eventLoop.makePromise(of: Void.self)
        answering = true
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        let connection = self.connection
        if response.drainConnection, isHTTP2 {
            // A graceful shutdown as RFC 9113 §6.8 describes it, once per connection (see
            // ConnectionRetirement), after this answer is out.
            done.futureResult.assumeIsolated().whenComplete { _ in
                self.requestEnded()
                connection.retire()
            }
            return
        }
        done.futureResult.assumeIsolated().whenComplete { _ in self.requestEnded() }
        guard response.dropConnection else { return }
        connection.dropped()
        let channel = connection.channel
        let isHTTP2 = self.isHTTP2
        done.futureResult.whenComplete { _ in
            if isHTTP2 {
                // HTTP/2: say GOAWAY first, so the client knows to reconnect, then close.
                let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .maxID, errorCode: .noError, opaqueData: nil))
                channel.writeAndFlush(goAway).whenComplete { _ in channel.close(promise: nil) }
            } else {
                channel.close(promise: nil)
            }
        }
    }
}

/// First in each HTTP/2 stream's pipeline: refuses the stream with RST_STREAM REFUSED_STREAM
/// (RFC 9113 §8.7: the request was not processed, so a client may retry it anywhere).
final class StreamRefuser: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func refuse() {
        guard let context else { return }
        context.writeAndFlush(wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
    }
}
