/// An egress proxy for ``HTTP2Client``: every connection goes through it, except to the hosts
/// in ``noProxy``.
///
/// An `http://` proxy carries each connection as a `CONNECT host:port` tunnel, so TLS, its
/// certificate check and ALPN `h2` are end to end inside it and the HTTP/2 connections multiplex
/// as they do without a proxy. The client never reads `HTTPS_PROXY` or `NO_PROXY` itself: without
/// an `HTTPProxy` it connects directly, whatever the environment says.
public struct HTTPProxy: Sendable, Equatable, CustomStringConvertible {
    /// `scheme://[user:password@]host:port`, as libcurl's `CURLOPT_PROXY` takes it: `http`,
    /// `https`, `socks4`, `socks4a`, `socks5` or `socks5h`; credentials percent-encoded.
    public var url: String
    /// Hosts reached directly, in libcurl's `no_proxy` syntax: a name matches itself and the
    /// names under it (`example.com` matches `fcm.example.com`), an IP address or a CIDR range
    /// matches those addresses, `*` matches every host.
    public var noProxy: [String]

    public init(url: String, noProxy: [String] = []) {
        self.url = url
        self.noProxy = noProxy
    }

    /// The URL without its credentials, for errors and logs.
    public var description: String {
        guard let schemeEnd = url.range(of: "://"), let at = url[schemeEnd.upperBound...].lastIndex(of: "@") else { return url }
        return String(url[..<schemeEnd.upperBound]) + String(url[url.index(after: at)...])
    }
}
