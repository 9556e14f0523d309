import CCurl

/// Owns one `CURLSH*` share handle through which a thread's easy handles keep one TLS session
/// cache (`CURL_LOCK_DATA_SSL_SESSION`); `curl_share_cleanup` in `deinit`.
///
/// Without it each easy handle allocates a cache of its own before its first transfer (libcurl
/// 7.88: `Curl_ssl_initsessions` in `Curl_pretransfer`) and keeps it while pooled, thousands of
/// them. Shared, a new connection can also resume the TLS session of one opened before it.
///
/// Used on one thread only (the multi thread: its handles are made, driven and freed there),
/// so it needs no lock callbacks (curl_share_setopt(3), `CURLSHOPT_LOCKFUNC`). Every easy
/// handle set to it holds it (``CurlEasyHandle``), so it is cleaned up after the last of them,
/// as libcurl requires (curl_share_cleanup(3) fails while a handle still uses the share).
final class CurlShareHandle {
    let handle: UnsafeMutableRawPointer

    init() throws(HTTP2ClientError) {
        guard CurlGlobal.initialized, let handle = curl_share_init() else {
            throw HTTP2ClientError(code: .other, message: "curl_share_init failed", isRetryable: false)
        }
        guard ccurl_share_setopt_long(handle, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_SSL_SESSION.rawValue)) == CURLSHE_OK else {
            curl_share_cleanup(handle)
            throw HTTP2ClientError(code: .other, message: "curl_share_setopt(CURL_LOCK_DATA_SSL_SESSION) failed", isRetryable: false)
        }
        self.handle = handle
    }

    deinit {
        curl_share_cleanup(handle)
    }
}
