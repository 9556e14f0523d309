import CCurl

/// Owns one `CURLM*` multi handle; `curl_multi_cleanup` in `deinit`.
///
/// `@unchecked Sendable` only for ``wakeup()``, which libcurl documents as callable from any
/// thread; every other use is confined to the multi thread.
final class CurlMultiHandle: @unchecked Sendable {
    private let handle: UnsafeMutableRawPointer

    init(maxConcurrentStreams: Int, maxConnectionsPerHost: Int) throws(HTTP2ClientError) {
        guard CurlGlobal.initialized, let handle = curl_multi_init() else {
            throw HTTP2ClientError(code: .other, message: "curl_multi_init failed", isRetryable: false)
        }
        self.handle = handle
        ccurl_multi_setopt_long(handle, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        ccurl_multi_setopt_long(handle, CURLMOPT_MAX_HOST_CONNECTIONS, maxConnectionsPerHost)
        ccurl_multi_setopt_long(handle, CURLMOPT_MAX_CONCURRENT_STREAMS, maxConcurrentStreams)
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
    func wakeup() { _ = curl_multi_wakeup(handle) }

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
