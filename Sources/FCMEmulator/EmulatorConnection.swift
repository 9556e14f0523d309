import NIOCore
import NIOHTTP2
import Synchronization

/// One connection's requests and its graceful retirement (RFC 9113 §6.8), as decisions without
/// I/O: ``EmulatorConnection`` acts on them.
///
/// A connection retires once, however many answers ask for it. A GOAWAY naming stream 2^31-1
/// announces it, followed by a PING. The client answers the PING only after reading the
/// announcement, so every stream it opened before it stopped opening streams has reached the
/// server by the time the PING's acknowledgement does. The final GOAWAY then names the highest
/// stream the client opened, and no stream the client sent is left above it. Once every
/// request up to it is answered, the connection is drained; it closes when the client closes
/// it, or after a linger.
///
/// Once: with one retirement per answer that asked, a later GOAWAY could be written after
/// an earlier retirement had begun the close (TLS close_notify); BoringSSL refuses writes after
/// that, and NIOSSL then drops the socket at once, cutting the client off from answers it had
/// not read yet.
struct ConnectionRetirement {
    enum Phase: Equatable {
        case serving
        /// The announcing GOAWAY and its PING are out: the client should open no new stream.
        case announced
        /// The final GOAWAY is out, naming ``ConnectionRetirement/lastStreamID``.
        case final
        /// Every request up to the last stream is answered: the connection closes when the
        /// client closes it, or after the linger; nothing more is written.
        case drained
        /// Closed another way: dropped, or requests still open at the deadline.
        case closed
    }

    private(set) var phase = Phase.serving
    /// Requests begun (their stream opened, or over HTTP/1.1 their head arrived) and not yet
    /// answered, refused or reset.
    private(set) var open = 0
    /// The highest stream the client has opened on this connection.
    private(set) var highestStreamID = 0
    /// The last stream the final GOAWAY named: any higher one is not processed.
    private(set) var lastStreamID: Int?

    /// A request began on `streamID` (nil over HTTP/1.1). False if the final GOAWAY named a
    /// lower last stream: the client takes the request as unprocessed and may send it again
    /// elsewhere, so it must not be processed; it is refused and not counted.
    mutating func requestBegan(streamID: Int?) -> Bool {
        if let streamID {
            if let lastStreamID, streamID > lastStreamID { return false }
            highestStreamID = max(highestStreamID, streamID)
        }
        open += 1
        return true
    }

    /// A counted request's answer is written out, or it was refused, or its stream was reset
    /// before an answer. True if that drained the connection.
    mutating func requestEnded() -> Bool {
        open = max(0, open - 1)
        return drainIfAnswered()
    }

    /// An answer asked for the connection to retire. True the first time only: then the
    /// announcing GOAWAY and its PING are to be sent.
    mutating func retire() -> Bool {
        guard phase == .serving else { return false }
        phase = .announced
        return true
    }

    /// The time for the final GOAWAY has come (the PING is acknowledged, or its wait is over):
    /// the last stream it names, and whether that drained the connection (nothing open). Nil
    /// unless announced.
    mutating func sendFinal() -> (lastStreamID: Int, drained: Bool)? {
        guard phase == .announced else { return nil }
        phase = .final
        lastStreamID = highestStreamID
        return (highestStreamID, drainIfAnswered())
    }

    /// The connection is closing another way (dropped, or the retirement's deadline). True if
    /// it is to be closed now: neither drained nor closed yet.
    mutating func close() -> Bool {
        guard phase != .drained, phase != .closed else { return false }
        phase = .closed
        return true
    }

    private mutating func drainIfAnswered() -> Bool {
        guard phase == .final, open == 0 else { return false }
        phase = .drained
        return true
    }
}

/// A connection the emulator serves (HTTP/2, or HTTP/1.1 where nothing retires), shared by the
/// handlers of its requests: the state lives with the connection, so a new connection never
/// inherits an old one's.
final class EmulatorConnection: Sendable {
    let channel: Channel
    private let core: EmulatorCore
    private let retirement = Mutex(ConnectionRetirement())

    /// The PING that follows the announcing GOAWAY; its acknowledgement times the final GOAWAY.
    static let goAwayPing = HTTP2PingData(withInteger: 0x676f_6177_6179_2121)
    /// The final GOAWAY goes out this long after the announcement if the PING is not
    /// acknowledged: a client that reads nothing (libcurl does not read a connection with no
    /// transfer on it) opens no stream either.
    static let pingTimeout = TimeAmount.seconds(5)
    /// A drained connection stays open this long for the client to close it first (libcurl
    /// does as soon as its streams on it are done). Closing right after the last answers, while
    /// the client may still be sending (stream resets, window updates), makes the kernel answer
    /// with a TCP reset, and the client loses answers it has not read yet: it sends them again,
    /// and they are processed twice. nginx closes a retired HTTP/2 connection the same way
    /// ("lingering close after GOAWAY", nginx 1.19.1; RFC 9112 §9.6 describes the reset).
    static let linger = TimeAmount.seconds(1)
    /// Requests still open this long after the retirement began are cut.
    static let retirementDeadline = TimeAmount.seconds(10)

    init(channel: Channel, core: EmulatorCore) {
        self.channel = channel
        self.core = core
    }

    /// See ``ConnectionRetirement/requestBegan(streamID:)``.
    func requestBegan(streamID: Int?) -> Bool {
        let (began, open) = retirement.withLock { r in (r.requestBegan(streamID: streamID), r.open) }
        if began { core.noteRequestsOpen(open) }
        return began
    }

    func requestEnded() {
        if retirement.withLock({ $0.requestEnded() }) { closeAfterLinger() }
    }

    /// Retires the connection, unless it is retiring already: the announcing GOAWAY
    /// (``GoAwayAnnouncer``) and a PING; the final GOAWAY follows its acknowledgement
    /// (``pingAcknowledged()``). On the connection's event loop.
    func retire() {
        guard retirement.withLock({ $0.retire() }) else { return }
        guard let announcer = try? channel.pipeline.syncOperations.handler(type: GoAwayAnnouncer.self) else { return }
        announcer.announce()
        channel.writeAndFlush(HTTP2Frame(streamID: .rootStream, payload: .ping(Self.goAwayPing, ack: false)), promise: nil)
        channel.eventLoop.scheduleTask(in: Self.pingTimeout) { self.sendFinal() }
        channel.eventLoop.scheduleTask(in: Self.retirementDeadline) {
            if self.retirement.withLock({ $0.close() }) { self.channel.close(promise: nil) }
        }
    }

    /// The client acknowledged the PING that followed the announcement: it has read the
    /// announcement, and every stream it opened before has arrived (each opened a stream
    /// channel, counted by ``requestBegan(streamID:)``, before this frame was read).
    func pingAcknowledged() {
        sendFinal()
    }

    /// The connection is being closed at once (a dropped connection): retiring no more.
    func dropped() {
        _ = retirement.withLock { $0.close() }
    }

    private func sendFinal() {
        guard let (last, drained) = retirement.withLock({ $0.sendFinal() }) else { return }
        let final = HTTP2Frame(streamID: .rootStream, payload: .goAway(lastStreamID: HTTP2StreamID(last), errorCode: .noError, opaqueData: nil))
        channel.writeAndFlush(final, promise: nil)
        if drained { closeAfterLinger() }
    }

    private func closeAfterLinger() {
        channel.eventLoop.scheduleTask(in: Self.linger) { self.channel.close(promise: nil) }
    }
}
