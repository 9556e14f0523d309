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
                            connection.configureHTTP2Pipeline(
                                mode: .server, connectionConfiguration: Self.connectionConfiguration,
                                streamConfiguration: Self.streamConfiguration,
                                inboundStreamInitializer: { stream in
                                    stream.eventLoop.makeCompletedFuture {
                                        try stream.pipeline.syncOperations.addHandlers([
                                            StreamRefuser(), HTTP2FramePayloadToHTTP1ServerCodec(), EmulatorHTTPHandler(core: core, isHTTP2: true),
                                        ])
                                    }
                                }
                            ).map { _ in }
                        },
                        http1ChannelConfigurator: { connection in
                            connection.pipeline.configureHTTPServerPipeline().flatMap {
                                connection.eventLoop.makeCompletedFuture {
                                    try connection.pipeline.syncOperations.addHandler(EmulatorHTTPHandler(core: core, isHTTP2: false))
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
/// answers after any injected latency, and drops the connection when told to.
final class EmulatorHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let core: EmulatorCore
    private let isHTTP2: Bool
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(core: EmulatorCore, isHTTP2: Bool) {
        self.core = core
        self.isHTTP2 = isHTTP2
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let h):
            head = h
            body = []
            let streamID = (try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)).map { Int($0) }
            core.streamOpened(on: ObjectIdentifier(context.channel.parent ?? context.channel), streamID: streamID)
        case .body(var buffer):
            body += buffer.readBytes(length: buffer.readableBytes) ?? []
        case .end:
            guard let head else { return }
            self.head = nil
            let request = EmulatorRequest(
                method: head.method.rawValue, path: head.uri, headers: head.headers.map { ($0.name, $0.value) }, body: body)
            let response = core.handle(request)
            if response.refuseStream, let refuser = try? context.pipeline.syncOperations.handler(type: StreamRefuser.self) {
                core.streamClosed(on: ObjectIdentifier(context.channel.parent ?? context.channel))
                refuser.refuse()
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

    private func respond(context: ChannelHandlerContext, _ response: EmulatorResponse, keepAlive: Bool) {
        var headers = HTTPHeaders(response.headers)
        headers.add(name: "content-length", value: String(response.body.count))
        let version: HTTPVersion = isHTTP2 ? .http2 : .http1_1
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .init(statusCode: response.status), headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: response.body)))), promise: nil)
        let done = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: done)
        let core = self.core
        let connectionID = ObjectIdentifier(context.channel.parent ?? context.channel)
        done.futureResult.whenComplete { _ in core.streamClosed(on: connectionID) }
        if response.drainConnection, let parent = context.channel.parent {
            // A graceful shutdown as RFC 9113 §6.8 describes it: a GOAWAY with the highest
            // stream ID says no new stream should come; after about a round trip, a second
            // GOAWAY names the last stream that will be processed (the client takes any higher
            // one as refused and may send it again elsewhere); close once those are answered.
            done.futureResult.whenComplete { _ in
                let warning = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .maxID, errorCode: .noError, opaqueData: nil))
                parent.writeAndFlush(warning, promise: nil)
                parent.eventLoop.scheduleTask(in: .milliseconds(50)) {
                    let last = HTTP2StreamID(core.highestStreamID(on: connectionID))
                    let final = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: last, errorCode: .noError, opaqueData: nil))
                    parent.writeAndFlush(final, promise: nil)
                    Self.closeWhenDrained(parent, core: core, connection: connectionID, deadline: .now() + .seconds(10))
                }
            }
            return
        }
        guard response.dropConnection else { return }
        let parent = context.channel.parent
        let connection = parent ?? context.channel
        done.futureResult.whenComplete { _ in
            if parent != nil {
                // HTTP/2: say GOAWAY first, so the client knows to reconnect, then close.
                let goAway = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: .maxID, errorCode: .noError, opaqueData: nil))
                connection.writeAndFlush(goAway).whenComplete { _ in connection.close(promise: nil) }
            } else {
                connection.close(promise: nil)
            }
        }
    }
}

extension EmulatorHTTPHandler {
    /// Closes `connection` once no request on it is being answered, or at `deadline`.
    static func closeWhenDrained(_ connection: Channel, core: EmulatorCore, connection id: ObjectIdentifier, deadline: NIODeadline) {
        if core.streamsOpen(on: id) == 0 || .now() >= deadline {
            connection.close(promise: nil)
            return
        }
        connection.eventLoop.scheduleTask(in: .milliseconds(20)) {
            closeWhenDrained(connection, core: core, connection: id, deadline: deadline)
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
