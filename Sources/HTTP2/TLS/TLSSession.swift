import COpenSSL

#if canImport(Glibc)
    import Glibc
#endif

/// One TLS client connection over a non-blocking socket: an OpenSSL `SSL` it owns, which never
/// blocks. Each call says what it needs next (``Progress``); the caller polls the socket for it.
///
/// Not thread-safe: one ``NativeLoop`` thread uses it. The socket stays the caller's.
final class TLSSession {
    private let ssl: OpaquePointer

    /// How a call went.
    enum Progress: Equatable {
        /// Done, or `n` bytes moved.
        case done(Int)
        /// Call again when the socket is readable.
        case wantRead
        /// Call again when the socket is writable.
        case wantWrite
        /// The peer closed the TLS session (close_notify or EOF).
        case closed
        /// Failed; the connection cannot be used. `verification`: the server's certificate
        /// was refused (not worth a retry).
        case failed(String, verification: Bool)
    }

    /// - Parameters:
    ///   - host: the server's name or IP address: sent as SNI (a name only) and checked
    ///     against its certificate.
    init(context: TLSContext, socket: Int32, host: String) throws(HTTP2ClientError) {
        guard let ssl = SSL_new(context.pointer) else {
            throw HTTP2ClientError(code: .tls, message: "SSL_new failed: \(TLSContext.lastError())", isRetryable: true)
        }
        self.ssl = ssl
        SSL_set_fd(ssl, socket)
        let param = SSL_get0_param(ssl)
        // The name (or address) the certificate must carry: a failure here would check none.
        let named: Bool
        if Self.isIPAddress(host) {
            named = X509_VERIFY_PARAM_set1_ip_asc(param, host) == 1
        } else {
            X509_VERIFY_PARAM_set_hostflags(param, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            named = copenssl_set_tlsext_host_name(ssl, host) == 1 && X509_VERIFY_PARAM_set1_host(param, host, 0) == 1
        }
        guard named else {
            throw HTTP2ClientError(code: .tls, message: "cannot check certificates for \(host): \(TLSContext.lastError())", isRetryable: false)
        }
        SSL_set_connect_state(ssl)
    }

    deinit { SSL_free(ssl) }

    /// Advances the handshake.
    func handshake() -> Progress {
        Self.clearErrors()
        let r = SSL_do_handshake(ssl)
        return r == 1 ? .done(0) : progress(r)
    }

    /// Whether the server chose HTTP/2 (ALPN `h2`), after the handshake.
    var negotiatedH2: Bool {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length == 2 else { return false }
        return data[0] == UInt8(ascii: "h") && data[1] == UInt8(ascii: "2")
    }

    /// Reads decrypted bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Progress {
        Self.clearErrors()
        let r = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, Int(Int32.max))))
        return r > 0 ? .done(Int(r)) : progress(r)
    }

    /// Encrypts and writes `bytes` (as few TLS records as their size allows): all of them, some
    /// (a full socket buffer: the rest again later), or none.
    func write(_ bytes: UnsafeRawBufferPointer) -> Progress {
        guard !bytes.isEmpty else { return .done(0) }
        Self.clearErrors()
        let r = SSL_write(ssl, bytes.baseAddress, Int32(min(bytes.count, Int(Int32.max))))
        return r > 0 ? .done(Int(r)) : progress(r)
    }

    /// Sends close_notify, without waiting for the peer's.
    func shutdown() {
        Self.clearErrors()
        _ = SSL_shutdown(ssl)
        Self.clearErrors()
    }

    /// OpenSSL's error queue is the thread's, shared by every connection of the loop: emptied
    /// before each call, so that what `SSL_get_error` reads is that call's.
    private static func clearErrors() {
        ERR_clear_error()
        errno = 0
    }

    private func progress(_ result: Int32) -> Progress {
        let err = errno  // before anything else can change it
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closed
        case SSL_ERROR_SYSCALL:
            let detail = TLSContext.lastError()
            if detail == "no detail" && err == 0 { return .closed }  // EOF without close_notify
            return .failed(err != 0 ? String(cString: strerror(err)) : detail, verification: false)
        default:
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                let reason = String(cString: X509_verify_cert_error_string(verify))
                ERR_clear_error()
                return .failed("the server's certificate was refused: \(reason)", verification: true)
            }
            return .failed(TLSContext.lastError(), verification: false)
        }
    }

    private static func isIPAddress(_ host: String) -> Bool {
        host.contains(":") || (host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." })
    }
}
