import Foundation

/// `fcm.proxy` and `fcm.no_proxy`: the egress proxy that FCM sends and the OAuth2 token exchange
/// go through (docs/configuration.md, "Behind an egress proxy").
///
/// Unset in the file and in `PUSHBRIDGE_FCM_PROXY`, the proxy is the environment's, read as
/// libcurl reads it for an `https://` URL (`https_proxy`, `HTTPS_PROXY`, `all_proxy`,
/// `ALL_PROXY`, the first set), and likewise the hosts that bypass it (`no_proxy`, `NO_PROXY`).
/// The loader reads them once, so the value in use is checked like any other, printed by
/// `--print-config` and logged at start; the HTTP client itself never looks at the environment.
enum EgressProxy {
    /// Where the proxy comes from when `fcm.proxy` is unset, in libcurl's order.
    static let proxyVariables = ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
    /// Where the hosts that bypass it come from when `fcm.no_proxy` is unset.
    static let noProxyVariables = ["no_proxy", "NO_PROXY"]
    /// The proxy kinds libcurl knows. Without a scheme a URL is `http://`, as libcurl takes it.
    static let schemes = ["http", "https", "socks4", "socks4a", "socks5", "socks5h"]
    /// `fcm.proxy: off`: no proxy, whatever the environment says.
    static let off = "off"

    static let format =
        "off or a proxy URL, [scheme://][user:password@]host:port (scheme http, https, socks4, socks4a, socks5 or socks5h; credentials percent-encoded)"

    /// The URL as it is used and printed: the scheme spelled out (`http://` if none), a trailing
    /// `/` dropped. The port is required: libcurl would assume 1080, rarely what is meant. nil
    /// when `text` is not a proxy URL.
    static func normalized(_ text: String) -> String? {
        var rest = Substring(text)
        var scheme = "http"
        if let separator = rest.range(of: "://") {
            scheme = rest[..<separator.lowerBound].lowercased()
            rest = rest[separator.upperBound...]
        }
        guard schemes.contains(scheme) else { return nil }
        if rest.hasSuffix("/") { rest.removeLast() }
        var userinfo: Substring = ""
        if let at = rest.firstIndex(of: "@") {
            userinfo = rest[...at]
            rest = rest[rest.index(after: at)...]
            guard userinfo.count > 1, !userinfo.hasPrefix(":"), !userinfo.contains("/") else { return nil }
        }
        guard let (host, port) = hostAndPort(rest) else { return nil }
        return "\(scheme)://\(userinfo)\(host):\(port)"
    }

    /// `host:port` or `[IPv6]:port`: a host of name characters, a port in 1…65535.
    private static func hostAndPort(_ text: Substring) -> (Substring, Int)? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        let host = text[..<colon]
        let portText = text[text.index(after: colon)...]
        guard !portText.isEmpty, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber), let port = Int(portText),
            (1...65535).contains(port)
        else { return nil }
        let valid: Bool
        if host.hasPrefix("["), host.hasSuffix("]") {
            let inner = host.dropFirst().dropLast()
            valid = !inner.isEmpty && inner.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        } else {
            valid = !host.isEmpty && host.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }
        }
        return valid ? (host, port) : nil
    }

    /// `text` with the password of its `user:password@`, if any, replaced by `<redacted>`: for
    /// `--print-config`, logs and errors. Works on text that is not a valid URL too.
    static func redacted(_ text: String) -> String {
        let start = text.range(of: "://")?.upperBound ?? text.startIndex
        guard let at = text[start...].lastIndex(of: "@"), let colon = text[start..<at].firstIndex(of: ":") else { return text }
        return String(text[...colon]) + "<redacted>" + String(text[at...])
    }

    /// `no_proxy` as libcurl reads it: comma-separated, blanks around names ignored.
    static func hosts(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

extension ConfigFileLoader {
    /// Fills `fcm.proxy` and `fcm.no_proxy` from the environment's proxy variables where neither
    /// the file nor `PUSHBRIDGE_*` set them, checking the proxy URL as if it were the key's.
    mutating func resolveEgressProxy(_ config: inout PushbridgeConfig) {
        if config.fcm.proxy != nil {
            let override = ConfigSchema.environmentName("fcm.proxy")
            config.fcm.proxyOrigin = environment[override] != nil ? override : "fcm.proxy"
        } else if let name = EgressProxy.proxyVariables.first(where: { !(environment[$0] ?? "").isEmpty }), let raw = environment[name] {
            if let url = EgressProxy.normalized(raw) {
                config.fcm.proxy = url
                config.fcm.proxyOrigin = name
            } else {
                problems.append(
                    .init(
                        location: name,
                        message:
                            "fcm.proxy is unset, so the proxy is \(name)'s, which must be \(EgressProxy.format), got \"\(EgressProxy.redacted(raw))\" (set fcm.proxy: off to ignore it)"
                    ))
            }
        }
        if config.fcm.noProxy == nil, let name = EgressProxy.noProxyVariables.first(where: { environment[$0] != nil }) {
            let hosts = EgressProxy.hosts(environment[name] ?? "")
            config.fcm.noProxy = hosts.isEmpty ? nil : hosts
        }
    }
}

extension PushbridgeConfig.FCM {
    /// The proxy URL connections to FCM and the token endpoint go through; nil: direct.
    public var proxyURL: String? { proxy == EgressProxy.off ? nil : proxy }

    /// The proxy in use, for the startup log: its URL without the password, where it came
    /// from, and the hosts that bypass it; or `none`.
    public var proxySummary: String {
        guard let url = proxyURL else { return proxy == EgressProxy.off ? "none (fcm.proxy: off)" : "none" }
        var summary = "\(EgressProxy.redacted(url)) (from \(proxyOrigin ?? "fcm.proxy"))"
        if let noProxy, !noProxy.isEmpty { summary += ", not for \(noProxy.joined(separator: ","))" }
        return summary
    }
}
