import CNghttp2

#if canImport(Glibc)
    import Glibc
#endif

/// What an ``H2Session`` tells its connection.
protocol H2SessionDelegate: AnyObject {
    /// The stream `id` ended: answered in full (`errorCode` 0) or reset (`NGHTTP2_*` code).
    func streamClosed(_ id: Int32, errorCode: UInt32)
    /// The server is going away: streams above `lastStreamID` were not processed.
    func goAway(lastStreamID: Int32, errorCode: UInt32)
    /// The server answered our PING.
    func pingAcknowledged()
}

/// The client side of one HTTP/2 connection's framing: an nghttp2 session that owns no socket.
/// Bytes read go in (``receive(_:)``); the frames to send come out together
/// (``drainOutput(into:)``), so that the connection writes a turn's frames as one TLS record.
/// Owns the `nghttp2_session`.
///
/// Not thread-safe: confined to its connection's thread.
final class H2Session {
    private var session: OpaquePointer?
    private weak var delegate: H2SessionDelegate?

    /// A client session telling `delegate` of closed streams, GOAWAY and PING answers; its
    /// SETTINGS (no server push, 1 MB stream windows, a 16 MB connection window) go with the
    /// first flush.
    init(delegate: H2SessionDelegate) throws(HTTP2ClientError) {
        self.delegate = delegate
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            throw HTTP2ClientError(code: .other, message: "nghttp2_session_callbacks_new failed", isRetryable: false)
        }
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onData)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrame)
        var created: OpaquePointer?
        let me = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_client_new(&created, callbacks, me) == 0, let created else {
            throw HTTP2ClientError(code: .other, message: "nghttp2_session_client_new failed", isRetryable: false)
        }
        session = created
        // No server push; a window large enough that answers never wait for our updates.
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: 1 << 20),
        ]
        _ = nghttp2_submit_settings(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count)
        _ = nghttp2_session_set_local_window_size(created, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, 16 << 20)
    }

    deinit { nghttp2_session_del(session) }

    /// The error code of a stream the server did not process (RFC 9113 §8.7): safe to send again.
    static let refusedStream = NGHTTP2_REFUSED_STREAM.rawValue

    /// Queues a request on a new stream; its frames leave with the next ``drainOutput(into:)``.
    /// - Returns: the stream's ID, or nil if the session takes no more streams (going away).
    func submit(method: String, authority: String, path: String, headers: HTTPHeaders, stream: H2Stream) -> Int32? {
        var names: [(String, String)] = [(":method", method), (":scheme", "https"), (":authority", authority), (":path", path)]
        for field in headers.fields {
            let name = field.name.lowercased()
            // Hop-by-hop fields are not HTTP/2's (RFC 9113 §8.2.2); nghttp2 would refuse them.
            if name == "connection" || name == "keep-alive" || name == "transfer-encoding" || name == "upgrade" || name == "host" {
                continue
            }
            names.append((name, field.value))
        }
        if !stream.body.isEmpty && !names.contains(where: { $0.0 == "content-length" }) {
            names.append(("content-length", String(stream.body.count)))
        }
        // One buffer holds every name and value; nghttp2 copies them before it returns.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(names.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count })
        for (name, value) in names {
            bytes.append(contentsOf: name.utf8)
            bytes.append(contentsOf: value.utf8)
        }
        let user = Unmanaged.passUnretained(stream).toOpaque()
        let id = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var nvs: [nghttp2_nv] = []
            nvs.reserveCapacity(names.count)
            var at = 0
            for (name, value) in names {
                let n = name.utf8.count
                let v = value.utf8.count
                nvs.append(
                    nghttp2_nv(
                        name: buffer.baseAddress! + at, value: buffer.baseAddress! + at + n, namelen: n, valuelen: v,
                        flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
                at += n + v
            }
            if stream.body.isEmpty {
                return nghttp2_submit_request(session, nil, nvs, nvs.count, nil, user)
            }
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: user), read_callback: readBody)
            return nghttp2_submit_request(session, nil, nvs, nvs.count, &provider, user)
        }
        return id > 0 ? id : nil
    }

    /// Feeds bytes read from the connection. False: the server broke the protocol, or a callback
    /// failed; the connection must close.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return true }
        return nghttp2_session_mem_recv(session, base, bytes.count) == bytes.count
    }

    /// Appends every frame ready to go to `output`. False on a fatal session error.
    func drainOutput(into output: inout [UInt8]) -> Bool {
        while true {
            var data: UnsafePointer<UInt8>?
            let n = nghttp2_session_mem_send(session, &data)
            if n < 0 { return false }
            guard n > 0, let data else { return true }
            output.append(contentsOf: UnsafeBufferPointer(start: data, count: n))
        }
    }

    /// Whether the session still wants to read or write; neither: it is done (after GOAWAY both ways).
    var isAlive: Bool { nghttp2_session_want_read(session) != 0 || nghttp2_session_want_write(session) != 0 }

    /// Streams the server allows open at once (100 until its SETTINGS say otherwise).
    var remoteMaxConcurrentStreams: Int {
        Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
    }

    /// Queues a PING (the server must answer it).
    func ping() { _ = nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil) }

    /// Resets stream `id` (CANCEL): we no longer want its answer. Its close is still reported.
    func reset(_ id: Int32) {
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, NGHTTP2_CANCEL.rawValue)
    }

    /// Queues a GOAWAY with no error and ends the session: streams still open are dropped, so
    /// call it with none open (an idle connection's close).
    func goAway() { _ = nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue) }

    fileprivate static func from(_ user: UnsafeMutableRawPointer?) -> H2Session {
        Unmanaged<H2Session>.fromOpaque(user!).takeUnretainedValue()
    }

    fileprivate func stream(_ id: Int32) -> H2Stream? {
        nghttp2_session_get_stream_user_data(session, id).map { Unmanaged<H2Stream>.fromOpaque($0).takeUnretainedValue() }
    }

    fileprivate func closed(_ id: Int32, _ code: UInt32) { delegate?.streamClosed(id, errorCode: code) }
    fileprivate func goingAway(_ last: Int32, _ code: UInt32) { delegate?.goAway(lastStreamID: last, errorCode: code) }
    fileprivate func pinged() { delegate?.pingAcknowledged() }
}

private let onHeader: nghttp2_on_header_callback = { session, frame, name, nameLength, value, valueLength, _, user in
    guard let frame, frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue), let name, let value else { return 0 }
    guard let stream = H2Session.from(user).stream(frame.pointee.hd.stream_id) else { return 0 }
    if nameLength == 7, name[0] == UInt8(ascii: ":") {
        if memcmp(name, ":status", 7) == 0 {
            var status = 0
            for i in 0..<valueLength { status = status * 10 + Int(value[i] &- 48) }
            stream.status = status
        }
        return 0
    }
    if name[0] == UInt8(ascii: ":") { return 0 }
    if stream.headerLines.isEmpty { stream.headerLines.reserveCapacity(H2Stream.answerCapacity) }
    stream.headerLines.append(contentsOf: UnsafeBufferPointer(start: name, count: nameLength))
    stream.headerLines.append(UInt8(ascii: ":"))
    stream.headerLines.append(UInt8(ascii: " "))
    stream.headerLines.append(contentsOf: UnsafeBufferPointer(start: value, count: valueLength))
    stream.headerLines.append(0x0D)
    stream.headerLines.append(0x0A)
    return 0
}

private let onData: nghttp2_on_data_chunk_recv_callback = { _, _, id, data, length, user in
    guard let data, let stream = H2Session.from(user).stream(id) else { return 0 }
    if stream.responseBody.isEmpty { stream.responseBody.reserveCapacity(max(length, H2Stream.answerCapacity)) }
    stream.responseBody.append(contentsOf: UnsafeBufferPointer(start: data, count: length))
    return 0
}

private let onStreamClose: nghttp2_on_stream_close_callback = { _, id, code, user in
    H2Session.from(user).closed(id, code)
    return 0
}

private let onFrame: nghttp2_on_frame_recv_callback = { _, frame, user in
    guard let frame else { return 0 }
    switch UInt32(frame.pointee.hd.type) {
    case NGHTTP2_GOAWAY.rawValue:
        H2Session.from(user).goingAway(frame.pointee.goaway.last_stream_id, frame.pointee.goaway.error_code)
    case NGHTTP2_PING.rawValue where frame.pointee.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0:
        H2Session.from(user).pinged()
    default: break
    }
    return 0
}

private let readBody: nghttp2_data_source_read_callback = { _, _, buffer, length, flags, source, _ in
    guard let source, let pointer = source.pointee.ptr, let buffer, let flags else { return 0 }
    let stream = Unmanaged<H2Stream>.fromOpaque(pointer).takeUnretainedValue()
    let n = min(length, stream.body.count - stream.bodySent)
    stream.body.withUnsafeBufferPointer { body in
        buffer.update(from: body.baseAddress! + stream.bodySent, count: n)
    }
    stream.bodySent += n
    if stream.bodySent == stream.body.count { flags.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue) }
    return n
}

extension HTTP2Client {
    /// The version of the nghttp2 library in use (the nghttp2 engine's), e.g. `1.52.0`.
    public static var nghttp2Version: String {
        nghttp2_version(0).map { String(cString: $0.pointee.version_str) } ?? "unknown"
    }
}
