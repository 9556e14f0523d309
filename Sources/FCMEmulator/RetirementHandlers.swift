import NIOCore
import NIOHTTP2

/// Between TLS and NIO's HTTP/2 handler: writes the GOAWAY that announces a connection's
/// retirement (last stream 2^31-1) as frame bytes, past NIO's connection state machine.
///
/// NIO takes any GOAWAY it sends as final: from then on it refuses every new stream with
/// RST_STREAM REFUSED_STREAM, those the client opened before it read the announcement too.
/// RFC 9113 §6.8's first GOAWAY is there to let those through ("initiating further requests
/// is prohibited", then "after allowing time for any in-flight stream creation ... another
/// GOAWAY frame with an updated last stream identifier"). So NIO sees only the final GOAWAY.
final class GoAwayAnnouncer: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Writes GOAWAY(last stream 2^31-1, NO_ERROR): the frame header of RFC 9113 §4.1 (length
    /// 8, type 0x7, no flags, stream 0), then §6.8's payload. On the event loop.
    func announce() {
        guard let context else { return }
        var frame = context.channel.allocator.buffer(capacity: 17)
        frame.writeBytes([0, 0, 8, 0x7, 0])
        frame.writeInteger(UInt32(0))
        frame.writeInteger(UInt32(Int32.max))
        frame.writeInteger(UInt32(0))
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }
}

/// Last in an HTTP/2 connection's pipeline, where NIO passes the connection's own frames:
/// tells the connection when the client acknowledges its retirement PING.
final class RetirementPingWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTP2Frame

    private let connection: EmulatorConnection

    init(connection: EmulatorConnection) {
        self.connection = connection
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .ping(let ping, ack: true) = unwrapInboundIn(data).payload, ping == EmulatorConnection.goAwayPing {
            connection.pingAcknowledged()
        }
        context.fireChannelRead(data)
    }
}
