import HTTP2
import TestSupport
import Testing

/// A server that ends connections with GOAWAY, as FCM's front ends do from time to time and
/// nginx does after `keepalive_requests`: the requests it did not process are sent again on a
/// new connection by the client itself (RFC 9113 §8.7), never failed to the caller.
///
/// The nghttp2 engine only: libcurl 7.88 fails some of them instead, after retrying each on
/// connections that are going away ("Connection died, tried 5 times before giving up", curl
/// 56, seen on this test), which the FCM client then retries after a backoff.
@Suite("HTTP2Client: a server that says GOAWAY")
struct GoAwayTests {
    @Test("nghttp2: requests a GOAWAY left unprocessed go again on a new connection: every request is answered")
    func goAwayIsTransparent() async throws {
        let server = try await NginxServer.start(keepaliveRequests: 50)
        let client = try HTTP2ClientTests.client(server, threads: 1, engine: .nghttp2)
        try await HTTP2ClientTests.loadExpectingOK(client, server, path: "/after100ms", total: 600, outstanding: 40)
        let used = try HTTP2ClientTests.perConnection(server)
        // 600 requests at 50 a connection: at least 12 connections, none serving more than 50.
        #expect(used.count >= 12 && used.values.allSatisfy { $0 <= 50 }, "requests per connection: \(used)")
        #expect(client.connectionsOpened == used.count)
        await client.shutdown()
    }
}
