import Testing

@testable import HTTP2

/// How the nghttp2 engine reads a request's URL: the connection it needs and the `:path` it sends.
@Suite("NativeTarget: an https URL as host, port and path")
struct NativeTargetTests {
    @Test(
        "host, port (443 by default) and path with its query; the fragment left out",
        arguments: [
            ("https://fcm.googleapis.com/v1/projects/p/messages:send", "fcm.googleapis.com", 443, "/v1/projects/p/messages:send"),
            ("https://127.0.0.1:8443/token", "127.0.0.1", 8443, "/token"),
            ("https://Example.COM", "example.com", 443, "/"),
            ("https://example.com?a=1", "example.com", 443, "/?a=1"),
            ("https://example.com:9/x?y=z#frag", "example.com", 9, "/x?y=z"),
            ("https://[::1]:8443/v1/traces", "::1", 8443, "/v1/traces"),
            ("https://[2001:db8::1]/", "2001:db8::1", 443, "/"),
        ])
    func parses(url: String, host: String, port: Int, path: String) throws {
        let target = try #require(NativeTarget(url: url))
        #expect(target.host == host && target.port == port && target.path == path)
    }

    @Test("the authority names an IPv6 address in brackets")
    func authority() throws {
        #expect(try #require(NativeTarget(url: "https://[::1]:8443/")).authority == "[::1]:8443")
        #expect(try #require(NativeTarget(url: "https://fcm.googleapis.com/x")).authority == "fcm.googleapis.com:443")
    }

    @Test(
        "anything but an https URL with a host is refused",
        arguments: [
            "http://example.com/", "example.com/x", "https://", "https:///x", "https://user:pw@example.com/", "https://example.com:0/",
            "https://example.com:99999/", "https://example.com:port/", "https://[::1/", "https://[::1]x/",
        ])
    func refuses(url: String) {
        #expect(NativeTarget(url: url) == nil)
    }
}
