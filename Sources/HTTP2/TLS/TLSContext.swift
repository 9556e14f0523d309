import COpenSSL

/// The TLS settings every connection of one ``NativeLoop`` shares: an OpenSSL `SSL_CTX` that
/// verifies the server against the configured CA file (or the system's), offers ALPN `h2` only,
/// speaks TLS 1.2 or later, and keeps client sessions for resumption. Owns the `SSL_CTX`.
///
/// `@unchecked Sendable`: configured once in `init`, then only read by OpenSSL (an `SSL_CTX` may
/// be shared by `SSL` objects on any thread).
final class TLSContext: @unchecked Sendable {
    let pointer: OpaquePointer

    /// - Parameter caFile: a PEM file of CA certificates to trust instead of the system's.
    init(caFile: String?) throws(HTTP2ClientError) {
        guard let ctx = SSL_CTX_new(TLS_client_method()) else { throw Self.error("SSL_CTX_new failed") }
        pointer = ctx
        _ = copenssl_ctx_set_min_proto_version(ctx, TLS1_2_VERSION)
        // A write may be split over several calls (a full socket buffer), and its buffer may be
        // another array when it is retried: the connection keeps its unsent bytes itself.
        _ = copenssl_ctx_set_mode(ctx, Int(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS))
        // A peer that closes without close_notify has closed (what HTTP/2 servers do), not failed.
        _ = SSL_CTX_set_options(ctx, copenssl_op_ignore_unexpected_eof())
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
        let loaded = caFile.map { SSL_CTX_load_verify_locations(ctx, $0, nil) } ?? SSL_CTX_set_default_verify_paths(ctx)
        guard loaded == 1 else {
            throw HTTP2ClientError(
                code: .tls, message: "cannot load the CA certificates\(caFile.map { " from \($0)" } ?? ""): \(Self.lastError())",
                isRetryable: false)
        }
        let alpn: [UInt8] = [2, UInt8(ascii: "h"), UInt8(ascii: "2")]
        guard SSL_CTX_set_alpn_protos(ctx, alpn, UInt32(alpn.count)) == 0 else { throw Self.error("cannot offer ALPN h2") }
    }

    deinit { SSL_CTX_free(pointer) }

    private static func error(_ what: String) -> HTTP2ClientError {
        HTTP2ClientError(code: .tls, message: "\(what): \(lastError())", isRetryable: false)
    }

    /// OpenSSL's queued errors of this thread, oldest first, and clears them.
    static func lastError() -> String {
        var parts: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            parts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return parts.isEmpty ? "no detail" : parts.joined(separator: "; ")
    }
}

extension HTTP2Client {
    /// The version of the OpenSSL library in use (the nghttp2 engine's TLS), e.g. `3.0.19`.
    public static var openSSLVersion: String {
        OpenSSL_version(OPENSSL_VERSION_STRING).map { String(cString: $0) } ?? "unknown"
    }
}
