import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One TLS + HTTP/2 connection of a ``NativeLoop``: a non-blocking TCP socket it owns, the TLS
/// session over it and the HTTP/2 session over that, and the transfers on its streams.
///
/// Its life: `connecting` (TCP), `handshaking` (TLS, ALPN `h2`), `ready` (streams), then
/// `closed`: by the server (its transfers fail retryably), by the loop (idle, dead, shut
/// down), or because the handshake failed. A connection the server sent GOAWAY on takes no more
/// streams and closes once its last one ends.
///
/// Frames wait in the HTTP/2 session until ``flush()``, which the loop calls once per turn:
/// every frame of a turn leaves in one `SSL_write` (one TLS record per 16 KB, one `send`).
///
/// Confined to its loop's thread.
final class NativeConnection: H2SessionDelegate {
    enum Phase: Equatable { case connecting, handshaking, ready, closed }

    let target: NativeTarget
    /// Its TCP socket (-1 until one is open); a new one for each address tried.
    private(set) var socket: Int32 = -1
    /// Addresses of the server not tried yet: a connect that fails goes on to the next.
    private var untried: ArraySlice<NativeResolver.Address>
    private(set) var phase: Phase = .connecting
    private var tls: TLSSession?
    private var session: H2Session?
    /// The transfers on its streams, by stream ID; a timed-out one stays until its stream closes.
    private(set) var streams: [Int32: NativeTransfer] = [:]
    /// Streams whose transfer has not been answered or timed out.
    private(set) var waiting = 0
    /// Plain bytes the TLS session has not taken yet, from ``pendingOffset`` on.
    private var pending: [UInt8] = []
    private var pendingOffset = 0
    /// The TLS session wants the socket writable (or readable) before it can go on.
    private var tlsWantsWrite = false
    /// A write stopped because TLS must read first (a TLS 1.3 key update): not polled for
    /// writability, which would spin, but tried again after the next read.
    private var writeWaitsForRead = false
    /// The server said GOAWAY, or we did: no new streams.
    private(set) var goingAway = false
    /// When it last received anything (or was opened).
    private(set) var lastReceived = ContinuousClock.now
    /// When its last stream ended (or it became ready).
    private(set) var idleSince = ContinuousClock.now
    let openedAt = ContinuousClock.now
    /// It became ready (TLS and HTTP/2 up) at some point.
    private(set) var wasReady = false
    /// A PING is out and not answered.
    private(set) var pingOut = false
    private let maxStreams: Int
    /// Transfers whose stream the server refused unprocessed (REFUSED_STREAM, or above the
    /// last stream its GOAWAY accepted): safe to send again (RFC 9113 §8.7), which the loop does
    /// on another connection (``takeRefused()``).
    private var refused: [NativeTransfer] = []
    /// Why it closed, for the transfers that were waiting for it.
    private(set) var closeError: HTTP2ClientError?

    /// Opens the TCP connection (non-blocking) to the first of `addresses` that takes it, as
    /// libcurl does (`localhost` may name `::1` first, where the server listens on 127.0.0.1
    /// only): ``phase`` is `connecting`, or `closed` with ``closeError`` if every one failed at once.
    init(target: NativeTarget, addresses: [NativeResolver.Address], maxStreams: Int) {
        self.target = target
        self.maxStreams = maxStreams
        untried = addresses[...]
        connectNext(after: ENOENT)
    }

    /// Closes the socket tried last, if any, and connects to the next address; fails the
    /// connection with `error` (errno) when none is left.
    private func connectNext(after error: Int32) {
        var error = error
        while let address = untried.popFirst() {
            if socket >= 0 { Glibc.close(socket) }
            socket = openSocket(family: address.family)
            guard socket >= 0 else {
                error = errno
                continue
            }
            var one: Int32 = 1
            _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            var storage = address.storage
            let r = withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, address.length) } }
            if r == 0 || errno == EINPROGRESS { return }
            error = errno
        }
        fail(connectError(error))
    }

    deinit {
        if socket >= 0 { Glibc.close(socket) }
    }

    /// Streams it can take now.
    var freeStreams: Int {
        guard phase == .ready, !goingAway, let session else { return 0 }
        return min(maxStreams, session.remoteMaxConcurrentStreams) - streams.count
    }

    /// What to poll its socket for.
    var pollEvents: Int16 {
        switch phase {
        case .connecting: return Int16(POLLOUT)
        case .handshaking: return tlsWantsWrite ? Int16(POLLOUT) : Int16(POLLIN)
        case .ready: return Int16(POLLIN) | (tlsWantsWrite || (pendingOffset < pending.count && !writeWaitsForRead) ? Int16(POLLOUT) : 0)
        case .closed: return 0
        }
    }

    /// The oldest of its transfers still waiting for an answer, since it went on a stream.
    var oldestWaiting: ContinuousClock.Instant? {
        guard waiting > 0 else { return nil }
        return streams.values.lazy.filter { !$0.isFinished }.compactMap(\.startedAt).min()
    }

    // MARK: Events

    /// The socket is ready for what ``pollEvents`` asked (or in error).
    func handle(revents: Int16, context: TLSContext, buffer: UnsafeMutableRawBufferPointer) {
        switch phase {
        case .connecting:
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length)
            if error != 0 { return connectNext(after: error) }
            do {
                tls = try TLSSession(context: context, socket: socket, host: target.host)
            } catch {
                return fail(error)
            }
            phase = .handshaking
            handshake()
        case .handshaking:
            handshake()
        case .ready:
            if revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { read(into: buffer) }
            if phase == .ready, revents & Int16(POLLOUT) != 0 { write() }
        case .closed:
            break
        }
    }

    private func handshake() {
        guard let tls else { return }
        switch tls.handshake() {
        case .done:
            guard tls.negotiatedH2 else {
                return fail(HTTP2ClientError(code: .tls, message: "\(target.authority) does not speak HTTP/2 (ALPN h2)", isRetryable: false))
            }
            do {
                session = try H2Session(delegate: self)
            } catch {
                return fail(error)
            }
            phase = .ready
            wasReady = true
            tlsWantsWrite = false
            idleSince = .now
            lastReceived = .now
            flush()
        case .wantRead: tlsWantsWrite = false
        case .wantWrite: tlsWantsWrite = true
        case .closed:
            fail(HTTP2ClientError(code: .tls, message: "\(target.authority) closed the connection during the TLS handshake", isRetryable: true))
        case .failed(let message, let verification):
            let hint = verification ? " (is the server's CA in the configured CA file?)" : ""
            fail(HTTP2ClientError(code: .tls, message: "TLS with \(target.authority) failed: \(message)\(hint)", isRetryable: !verification))
        }
    }

    /// Reads everything the socket has through `buffer` (the loop's), feeding the HTTP/2 session.
    private func read(into buffer: UnsafeMutableRawBufferPointer) {
        guard let tls else { return }
        var got = false
        while phase == .ready {
            var progress = tls.read(into: buffer)
            if case .done(let n) = progress, !(session?.receive(UnsafeRawBufferPointer(rebasing: buffer[..<n])) ?? false) {
                progress = .failed("the server broke the HTTP/2 protocol", verification: false)
            }
            switch progress {
            case .done: got = true
            case .wantRead:
                tlsWantsWrite = false
                return finishRead(got)
            case .wantWrite:
                tlsWantsWrite = true
                return finishRead(got)
            case .closed:
                finishRead(got)
                return fail(broken(nil))
            case .failed(let message, _):
                finishRead(got)
                return fail(broken(message))
            }
        }
    }

    private func finishRead(_ got: Bool) {
        if got {
            lastReceived = .now
            pingOut = false
        }
        if writeWaitsForRead {
            writeWaitsForRead = false
            write()
        }
        if let session, !session.isAlive, phase == .ready { close(nil) }
    }

    // MARK: Streams

    /// Puts `transfer` on a new stream (its frames leave with the next ``flush()``). False if the
    /// connection takes no more streams.
    func start(_ transfer: NativeTransfer) -> Bool {
        guard freeStreams > 0, let session else { return false }
        guard
            let id = session.submit(
                method: transfer.request.method, authority: target.requestAuthority, path: transfer.target.path, headers: transfer.request.headers,
                stream: transfer.stream)
        else {
            goingAway = true  // nghttp2 takes no more streams on it
            return false
        }
        streams[id] = transfer
        waiting += 1
        transfer.startedAt = .now
        return true
    }

    /// `transfer` timed out: its outcome is given, its stream reset (it stays in ``streams``
    /// until the stream closes, as nghttp2 still points at its exchange).
    func timedOut(_ transfer: NativeTransfer, error: HTTP2ClientError) {
        guard !transfer.isFinished else { return }
        waiting -= 1
        transfer.complete(.failure(error))
        if let id = streams.first(where: { $0.value === transfer })?.key { session?.reset(id) }
    }

    func streamClosed(_ id: Int32, errorCode: UInt32) {
        guard let transfer = streams.removeValue(forKey: id) else { return }
        if streams.isEmpty { idleSince = .now }
        guard !transfer.isFinished else { return }
        waiting -= 1
        if errorCode == H2Session.refusedStream && transfer.stream.status == 0 {
            refused.append(transfer)
        } else if errorCode == 0 && transfer.stream.status > 0 {
            transfer.complete(.success(transfer.response()))
        } else {
            transfer.complete(
                .failure(
                    HTTP2ClientError(
                        code: .connectionClosed, message: "\(target.authority) reset the stream (HTTP/2 error \(errorCode))", isRetryable: true)))
        }
    }

    func goAway(lastStreamID: Int32, errorCode: UInt32) { goingAway = true }

    /// The transfers refused unprocessed since the last call, to be sent again.
    func takeRefused() -> [NativeTransfer] {
        guard !refused.isEmpty else { return [] }
        defer { refused.removeAll() }
        for transfer in refused { transfer.restart() }
        return refused
    }

    func pingAcknowledged() { pingOut = false }

    /// Sends a PING, which the server must answer: proof of life for a connection whose
    /// requests take long.
    func ping() {
        guard phase == .ready, !pingOut, let session else { return }
        pingOut = true
        session.ping()
    }

    /// Says GOAWAY and ends the HTTP/2 session: no more streams either way, and any still open
    /// dropped (the loop calls it on an idle connection only, before closing it).
    func drain() {
        goingAway = true
        session?.goAway()
    }

    // MARK: Writing

    /// Writes every frame the HTTP/2 session has ready, after what an earlier flush left.
    func flush() {
        guard phase == .ready, let session else { return }
        if pendingOffset == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingOffset = 0
        }
        guard session.drainOutput(into: &pending) else {
            return fail(HTTP2ClientError(code: .connectionClosed, message: "HTTP/2 session with \(target.authority) failed", isRetryable: true))
        }
        if !tlsWantsWrite { write() }
        if phase == .ready, !session.isAlive, pendingOffset == pending.count { close(nil) }
    }

    private func write() {
        guard let tls else { return }
        while pendingOffset < pending.count {
            let progress = pending.withUnsafeBytes { tls.write(UnsafeRawBufferPointer(rebasing: $0[pendingOffset...])) }
            switch progress {
            case .done(let n): pendingOffset += n
            case .wantWrite:
                tlsWantsWrite = true
                return
            case .wantRead:
                tlsWantsWrite = false
                writeWaitsForRead = true
                return
            case .closed: return fail(broken(nil))
            case .failed(let message, _): return fail(broken(message))
            }
        }
        tlsWantsWrite = false
    }

    // MARK: Closing

    /// Closes it: every transfer still waiting fails with `error` (nil: none should be waiting).
    func close(_ error: HTTP2ClientError?) {
        guard phase != .closed else { return }
        if phase == .ready { tls?.shutdown() }
        fail(error ?? HTTP2ClientError(code: .connectionClosed, message: "the connection to \(target.authority) closed", isRetryable: true))
    }

    private func fail(_ error: HTTP2ClientError) {
        guard phase != .closed else { return }
        phase = .closed
        closeError = error
        // Refused ones not yet taken stay for the loop (takeRefused()): unprocessed, they go again.
        let transfers = streams.values
        streams.removeAll()
        waiting = 0
        session = nil  // before the transfers go: nghttp2 points at their exchanges
        for transfer in transfers { transfer.complete(.failure(error)) }
        if socket >= 0 { _ = Glibc.shutdown(socket, LinuxSocket.shutReadWrite) }
    }

    /// The connection was lost after it was up: closed by the server (`detail` nil), or failed.
    private func broken(_ detail: String?) -> HTTP2ClientError {
        let message = detail.map { "the connection to \(target.authority) failed: \($0)" } ?? "\(target.authority) closed the connection"
        return HTTP2ClientError(code: .connectionClosed, message: message, isRetryable: true)
    }

    private func connectError(_ code: Int32) -> HTTP2ClientError {
        HTTP2ClientError(
            code: .couldNotConnect, message: "could not connect to \(target.authority): \(String(cString: strerror(code)))", isRetryable: true)
    }
}

/// A non-blocking TCP socket of `family`, closed on exec; -1 on failure (see `errno`).
private func openSocket(family: Int32) -> Int32 {
    socket(family, LinuxSocket.stream | LinuxSocket.nonBlocking | LinuxSocket.closeOnExec, 0)
}

/// Linux's values of `<sys/socket.h>` constants this folder needs. Named here because the
/// module also imports libcurl's headers, which include `<sys/socket.h>` first: in an optimized
/// build the compiler then sees the constants as libcurl's, and only the folder that imports
/// libcurl may name them (scripts/check-layers.sh). The values are the kernel's ABI.
enum LinuxSocket {
    static let stream: Int32 = 1  // SOCK_STREAM
    static let nonBlocking: Int32 = 0o4000  // SOCK_NONBLOCK
    static let closeOnExec: Int32 = 0o2000000  // SOCK_CLOEXEC
    static let shutReadWrite: Int32 = 2  // SHUT_RDWR
}
