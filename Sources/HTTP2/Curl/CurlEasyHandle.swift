import CCurl
import Threading

/// Owns one `CURL*` easy handle; `curl_easy_cleanup` in `deinit`.
/// Used only on the multi thread (not `Sendable`).
final class CurlEasyHandle {
    private let handle: UnsafeMutableRawPointer
    /// The share it is set to, held so that it outlives this handle (``CurlShareHandle``).
    private var share: CurlShareHandle?
    /// `CURLOPT_ERRORBUFFER` of its transfers, set once (``makePooled(_:connections:share:)``):
    /// libcurl empties it as each transfer starts (7.60 and later), and a transfer's error is
    /// read before its handle serves the next one (``CurlTransfer/outcome(_:proxy:)``).
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))

    init() throws(HTTP2ClientError) {
        errorBuffer.initialize(to: 0)
        guard CurlGlobal.initialized, let handle = curl_easy_init() else {
            errorBuffer.deallocate()
            throw HTTP2ClientError(code: .other, message: "curl_easy_init failed", isRetryable: false)
        }
        self.handle = handle
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    func withPointer<T>(_ body: (UnsafeMutableRawPointer) throws -> T) rethrows -> T {
        try body(handle)
    }

    /// A handle with the options every request shares (TLS, HTTP/2, timeouts, callbacks) set
    /// once; ``CurlTransfer/configure(_:_:headers:)`` sets the rest per request.
    static func makePooled(
        _ config: HTTP2Client.Configuration, connections: CurlConnectionCounter, share: CurlShareHandle
    ) throws(HTTP2ClientError) -> CurlEasyHandle {
        let easy = try CurlEasyHandle()
        // Before its first transfer, which would allocate a TLS session cache of its own.
        easy.set(CURLOPT_SHARE, pointer: share.handle)
        easy.share = share
        easy.set(CURLOPT_ERRORBUFFER, pointer: easy.errorBuffer)
        easy.set(CURLOPT_NOSIGNAL, 1)
        easy.set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
        easy.set(CURLOPT_PIPEWAIT, 1)
        easy.set(CURLOPT_SSL_VERIFYPEER, 1)
        easy.set(CURLOPT_SSL_VERIFYHOST, 2)
        if let ca = config.caFile { easy.set(CURLOPT_CAINFO, string: ca) }
        easy.set(CURLOPT_CONNECTTIMEOUT_MS, Int(config.connectTimeout.milliseconds))
        easy.set(CURLOPT_TCP_KEEPALIVE, 1)
        setProxy(config.proxy, on: easy)
        // Answers are small (FCM's fit in one read; a longer one takes more than one): the least
        // libcurl allows. Its default is paid per request in flight, thousands of times over.
        easy.set(CURLOPT_BUFFERSIZE, 1_024)
        // Likewise the upload buffer a request body is copied through (64 KB by default): the
        // least libcurl allows. An FCM body is a few KB; a larger one takes more than one copy.
        // Freed once the body is out (releaseUploadBuffer()).
        easy.set(CURLOPT_UPLOAD_BUFFERSIZE, uploadBufferSize)
        // A connection idle this long is closed when libcurl next looks for one.
        easy.set(CURLOPT_MAXAGE_CONN, max(1, Int(config.idleConnectionTimeout.milliseconds / 1000)))
        easy.set(CURLOPT_WRITEFUNCTION, callback: writeCallback)
        easy.set(CURLOPT_HEADERFUNCTION, callback: headerCallback)
        _ = easy.withPointer { ccurl_easy_setopt_prereq_callback($0, prereqCallback) }
        connections.install(on: easy)
        return easy
    }

    /// The proxy, always set: libcurl reads `https_proxy`, `HTTPS_PROXY`, `all_proxy` and
    /// `no_proxy` from the environment unless `CURLOPT_PROXY` and `CURLOPT_NOPROXY` are set, an
    /// empty string meaning none. The client takes them from its configuration only.
    private static func setProxy(_ proxy: HTTPProxy?, on easy: CurlEasyHandle) {
        easy.set(CURLOPT_PROXY, string: proxy?.url ?? "")
        easy.set(CURLOPT_NOPROXY, string: proxy?.noProxy.joined(separator: ",") ?? "")
        // Tunnel every request with CONNECT, http:// ones too: the proxy sees host:port only.
        easy.set(CURLOPT_HTTPPROXYTUNNEL, proxy == nil ? 0 : 1)
    }

    /// The least upload buffer libcurl allows (`UPLOADBUFFER_MIN`).
    static let uploadBufferSize = 16_384

    /// Whether ``releaseUploadBuffer()`` is known to be safe with the libcurl loaded: 7.88, read
    /// for it (Debian bookworm's 7.88.1). Elsewhere the buffer lives until the transfer ends.
    static let canReleaseUploadBuffer: Bool = {
        guard let info = curl_version_info(CURLVERSION_TENTH) else { return false }
        return info.pointee.version_num >> 8 == 0x07_58
    }()

    /// Frees the upload buffer of a transfer whose body has all gone out; libcurl would keep it
    /// until the transfer ends, while FCM takes its time to answer.
    ///
    /// libcurl 7.88 copies a request body through a buffer of `CURLOPT_UPLOAD_BUFFERSIZE` bytes
    /// (`Curl_get_upload_buffer` in transfer.c) and frees it only in `multi_done`; setting the
    /// option frees it at once ("force a realloc next opportunity", setopt.c). Once the whole
    /// body is counted as sent, nothing reads that buffer again: the transfer no longer sends
    /// (`Curl_done_sending`), and the HTTP/2 filter copies the body into nghttp2's frames before
    /// `cf_h2_send` returns (http2.c clears `upload_mem` there). A retried transfer gets a new one.
    /// The buffer is paid per send in flight (docs/benchmarks.md). Call it only between libcurl
    /// calls, on the multi thread.
    func releaseUploadBuffer() { set(CURLOPT_UPLOAD_BUFFERSIZE, Self.uploadBufferSize) }

    @discardableResult
    func set(_ option: CURLoption, _ value: Int) -> CURLcode { ccurl_easy_setopt_long(handle, option, value) }

    @discardableResult
    func set(_ option: CURLoption, pointer value: UnsafeRawPointer?) -> CURLcode { ccurl_easy_setopt_ptr(handle, option, value) }

    @discardableResult
    func set(_ option: CURLoption, string value: String) -> CURLcode {
        // curl copies string options (since 7.17), so a temporary C string is enough.
        value.withCString { ccurl_easy_setopt_ptr(handle, option, $0) }
    }

    @discardableResult
    func set(_ option: CURLoption, offset value: Int64) -> CURLcode { ccurl_easy_setopt_off_t(handle, option, curl_off_t(value)) }

    @discardableResult
    func set(_ option: CURLoption, callback: ccurl_data_callback) -> CURLcode {
        ccurl_easy_setopt_data_callback(handle, option, callback)
    }

    func info(_ info: CURLINFO) -> Int {
        var value = 0
        _ = ccurl_easy_getinfo_long(handle, info, &value)
        return value
    }

    /// A `curl_off_t` info, e.g. the `*_TIME_T` timings (microseconds).
    func info(offset info: CURLINFO) -> Int64 {
        var value: curl_off_t = 0
        _ = ccurl_easy_getinfo_off_t(handle, info, &value)
        return Int64(value)
    }
}

/// Owns a `curl_slist` of header lines; `curl_slist_free_all` in `deinit`.
final class CurlHeaderList {
    private(set) var pointer: UnsafeMutablePointer<curl_slist>?
    let headers: HTTPHeaders

    init(_ headers: HTTPHeaders) {
        self.headers = headers
        for (name, value) in headers { pointer = curl_slist_append(pointer, "\(name): \(value)") }
        pointer = curl_slist_append(pointer, "Expect:")  // no 100-continue round trip
    }

    deinit {
        curl_slist_free_all(pointer)
    }
}
