import CCurl

/// Owns one `CURLM*` multi handle, driven by socket events (`curl_multi_socket_action`);
/// `curl_multi_cleanup` in `deinit`.
///
/// `@unchecked Sendable` only for ``connections``, which is atomic; every other use is confined
/// to the multi thread.
final class CurlMultiHandle: @unchecked Sendable {
    private var handle: UnsafeMutableRawPointer
    private let maxConcurrentStreams: Int
    private let maxConnections: Int
    /// CURLMOPT_MAX_HOST_CONNECTIONS as last set (multi thread only).
    private var allowedConnections: Int
    /// The connections this handle's transfers opened; held here so that it outlives
    /// `curl_multi_cleanup`, which closes the last of them.
    let connections: CurlConnectionCounter
    /// The sockets libcurl waits on; held here so that it outlives `curl_multi_cleanup`, which
    /// reports the last of them removed.
    let sockets = CurlSocketInterest()

    /// - Parameters:
    ///   - maxConcurrentStreams: streams per connection at most (the server may allow fewer).
    ///   - maxConnections: connections at most. libcurl opens another only when every stream
    ///     of the open ones is in use (`CURLPIPE_MULTIPLEX`); further transfers wait for a stream.
    ///   - corkable: its connections' sockets may be corked (``WriteFlushSchedule``).
    init(maxConcurrentStreams: Int, maxConnections: Int, corkable: Bool) throws(HTTP2ClientError) {
        self.connections = CurlConnectionCounter(corkable: corkable)
        self.maxConcurrentStreams = maxConcurrentStreams
        self.maxConnections = maxConnections
        self.handle = try Self.make(maxConcurrentStreams: maxConcurrentStreams, maxConnections: maxConnections, sockets: sockets)
        self.allowedConnections = maxConnections
    }

    private static func make(
        maxConcurrentStreams: Int, maxConnections: Int, sockets: CurlSocketInterest
    ) throws(HTTP2ClientError) -> UnsafeMutableRawPointer {
        guard CurlGlobal.initialized, let handle = curl_multi_init() else {
            throw HTTP2ClientError(code: .other, message: "curl_multi_init failed", isRetryable: false)
        }
        ccurl_multi_setopt_long(handle, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        ccurl_multi_setopt_long(handle, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnections)
        ccurl_multi_setopt_long(handle, CURLMOPT_MAX_TOTAL_CONNECTIONS, maxConnections)
        // Idle connections stay cached (up to the maximum) until CURLOPT_MAXAGE_CONN retires them.
        ccurl_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, maxConnections)
        ccurl_multi_setopt_long(handle, CURLMOPT_MAX_CONCURRENT_STREAMS, maxConcurrentStreams)
        sockets.install(on: handle)
        return handle
    }

    /// The connections libcurl may have now, at most `maxConnections`. ``CurlMultiLoop`` keeps it
    /// at what is open, plus one while a probe is out: libcurl 7.88 opens a connection for each
    /// transfer that finds no free stream on a *negotiated* connection, so a burst arriving
    /// while streams are still closing would open one per transfer. Multi thread only.
    func allowConnections(_ n: Int) {
        let n = max(1, min(n, maxConnections))
        guard n != allowedConnections else { return }
        allowedConnections = n
        ccurl_multi_setopt_long(handle, CURLMOPT_MAX_HOST_CONNECTIONS, n)
    }

    /// Closes every connection, for a handle with no transfer that has been idle: libcurl
    /// retires an idle connection only when a later transfer looks for one, and an idle
    /// handle has none. Multi thread only, with no easy handle added.
    func closeConnections() {
        guard let fresh = try? Self.make(maxConcurrentStreams: maxConcurrentStreams, maxConnections: maxConnections, sockets: sockets) else { return }
        curl_multi_cleanup(handle)
        handle = fresh
        sockets.removeAll()
        allowedConnections = maxConnections
    }

    deinit {
        curl_multi_cleanup(handle)
    }

    func add(_ easy: CurlEasyHandle) -> CURLMcode { easy.withPointer { curl_multi_add_handle(handle, $0) } }
    func remove(_ easy: CurlEasyHandle) { _ = easy.withPointer { curl_multi_remove_handle(handle, $0) } }

    /// Lets libcurl act on `socket`, which `poll(2)` found ready: only the transfers on that
    /// socket's connection run, and any transfer whose timer is due.
    ///
    /// Each transfer checks the socket itself (event mask 0), as under `curl_multi_perform`.
    /// libcurl 7.88 keeps the events passed here on the *connection* and hands them to whichever
    /// of its transfers runs first; told "writable", a transfer whose stream the server had
    /// already closed (an answer before the whole body was read) sent on it and failed with
    /// CURLE_HTTP2_STREAM ("stream N closed"). `HTTP2ClientTests` holds that case.
    func socketAction(_ socket: Int32) {
        var running: Int32 = 0
        _ = curl_multi_socket_action(handle, socket, 0, &running)
    }

    /// Lets libcurl run the transfers whose timers are due (new transfers are due at once).
    func timeoutAction() {
        var running: Int32 = 0
        _ = curl_multi_socket_action(handle, Self.socketTimeout, 0, &running)
    }

    /// `CURL_SOCKET_TIMEOUT` (`CURL_SOCKET_BAD`, -1): "no socket, the timers".
    private static let socketTimeout: curl_socket_t = -1

    /// Milliseconds until libcurl's next timer is due: 0 now, nil none.
    func timeout() -> Int? {
        var ms = -1
        _ = curl_multi_timeout(handle, &ms)
        return ms < 0 ? nil : ms
    }

    /// Completed transfers: (easy handle pointer, result), until none is left.
    ///
    /// Every message is read before `body` runs for the first: libcurl 7.88's
    /// `curl_multi_remove_handle` looks through the messages not yet read for one of the handle
    /// it removes, so removing each transfer as its message was read walked the rest of them, a
    /// cost that grew with the square of the transfers finished in one turn.
    func completed(_ body: (UnsafeMutableRawPointer, CURLcode) -> Void) {
        var done: [(easy: UnsafeMutableRawPointer, result: CURLcode)] = []
        var left: Int32 = 0
        while let message = curl_multi_info_read(handle, &left) {
            if message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle {
                if done.isEmpty { done.reserveCapacity(Int(left) + 1) }
                done.append((easy, ccurl_msg_result(message)))
            }
        }
        for transfer in done { body(transfer.easy, transfer.result) }
    }
}
