import CCurl
import Synchronization

/// Owns one `CURLM*` multi handle; `curl_multi_cleanup` in `deinit`.
///
/// `@unchecked Sendable` only for ``wakeup()``, which libcurl documents as callable from any
/// thread (under `lock`, against ``closeConnections()`` swapping the handle), and
/// ``connections``, which is atomic; every other use is confined to the multi thread.
final class CurlMultiHandle: @unchecked Sendable {
    /// Written only by the multi thread, under `lock`; read there freely.
    private var handle: UnsafeMutableRawPointer
    private let lock = Mutex(())
    private let maxConcurrentStreams: Int
    private let maxConnections: Int
    /// CURLMOPT_MAX_HOST_CONNECTIONS as last set (multi thread only).
    private var allowedConnections: Int
    /// The connections this handle's transfers opened; held here so that it outlives
    /// `curl_multi_cleanup`, which closes the last of them.
    let connections = CurlConnectionCounter()

    /// - Parameters:
    ///   - maxConcurrentStreams: streams per connection at most (the server may allow fewer).
    ///   - maxConnections: connections at most. libcurl opens another only when every stream
    ///     of the open ones is in use (`CURLPIPE_MULTIPLEX`); further transfers wait for a stream.
    init(maxConcurrentStreams: Int, maxConnections: Int) throws(HTTP2ClientError) {
        self.maxConcurrentStreams = maxConcurrentStreams
        self.maxConnections = maxConnections
        self.handle = try Self.make(maxConcurrentStreams: maxConcurrentStreams, maxConnections: maxConnections)
        self.allowedConnections = maxConnections
    }

    private static func make(maxConcurrentStreams: Int, maxConnections: Int) throws(HTTP2ClientError) -> UnsafeMutableRawPointer {
        guard CurlGlobal.initialized, let handle = curl_multi_init() else {
            throw HTTP2ClientError(code: .other, message: "curl_multi_init failed", isRetryable: false)
        }
        ccurl_multi_setopt_long(handle, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        ccurl_multi_setopt_long(handle, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnections)
        ccurl_multi_setopt_long(handle, CURLMOPT_MAX_TOTAL_CONNECTIONS, maxConnections)
        // Idle connections stay cached (up to the maximum) until CURLOPT_MAXAGE_CONN retires them.
        ccurl_multi_setopt_long(handle, CURLMOPT_MAXCONNECTS, maxConnections)
        ccurl_multi_setopt_long(handle, CURLMOPT_MAX_CONCURRENT_STREAMS, maxConcurrentStreams)
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
        lock.withLock { _ in ccurl_multi_setopt_long(handle, CURLMOPT_MAX_HOST_CONNECTIONS, n) }
    }

    /// Closes every connection, for a handle with no transfer that has been idle: libcurl
    /// retires an idle connection only when a later transfer looks for one, and an idle
    /// handle has none. Multi thread only, with no easy handle added.
    func closeConnections() {
        guard let fresh = try? Self.make(maxConcurrentStreams: maxConcurrentStreams, maxConnections: maxConnections) else { return }
        lock.withLock { _ in
            curl_multi_cleanup(handle)
            handle = fresh
        }
        allowedConnections = maxConnections
    }

    deinit {
        curl_multi_cleanup(handle)
    }

    func add(_ easy: CurlEasyHandle) -> CURLMcode { easy.withPointer { curl_multi_add_handle(handle, $0) } }
    func remove(_ easy: CurlEasyHandle) { _ = easy.withPointer { curl_multi_remove_handle(handle, $0) } }

    /// Drives all transfers; returns how many are still running.
    func perform() -> Int32 {
        var running: Int32 = 0
        _ = curl_multi_perform(handle, &running)
        return running
    }

    /// Waits for socket activity, a timeout, or ``wakeup()``.
    func poll(timeoutMilliseconds: Int32) {
        _ = curl_multi_poll(handle, nil, 0, timeoutMilliseconds, nil)
    }

    /// Interrupts ``poll(timeoutMilliseconds:)`` from any thread.
    func wakeup() { lock.withLock { _ in _ = curl_multi_wakeup(handle) } }

    /// Completed transfers: (easy handle pointer, result), until none is left.
    func completed(_ body: (UnsafeMutableRawPointer, CURLcode) -> Void) {
        var left: Int32 = 0
        while let message = curl_multi_info_read(handle, &left) {
            if message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle {
                body(easy, ccurl_msg_result(message))
            }
        }
    }
}
