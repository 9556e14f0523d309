import Foundation
import TestSupport
import Testing

@testable import HTTP2

@Suite("HTTP2Client's threads against a real TLS HTTP/2 server (nginx)")
struct HTTP2ThreadTests {
    /// Connections kept open however long the test takes (a loaded run is slow).
    static func client(_ server: NginxServer, threads: Int, streams: Int) throws -> HTTP2Client {
        try HTTP2ClientTests.client(server, streams: streams, threads: threads, idleTimeout: .seconds(600))
    }

    /// 300 requests at a time, answered after 100 ms, on 10 streams per connection: about 30
    /// connections over two threads. Then 150 at a time, sampled while they run: each thread
    /// carries a share of them. The earlier rule (the first thread with a free stream) gave all
    /// 150 to the thread whose connections could take them, the other's standing idle
    /// (docs/benchmarks.md).
    @Test("two threads share a load that fits either's connections")
    func threadsShareTheLoad() async throws {
        let server = try await NginxServer.start()
        let client = try Self.client(server, threads: 2, streams: 10)
        try await HTTP2ClientTests.loadExpectingOK(client, server, path: "/after100ms", total: 3_000, outstanding: 300)
        // Requests in flight per thread every 50 ms while 120 or more are, until the load ends.
        let loaded = try await withThrowingTaskGroup(of: [[Int]]?.self) { group in
            group.addTask {
                try await HTTP2ClientTests.loadExpectingOK(client, server, path: "/after100ms", total: 3_000, outstanding: 150)
                return nil
            }
            group.addTask {
                var samples: [[Int]] = []
                while (try? await Task.sleep(for: .milliseconds(50))) != nil {
                    let perThread = client.requestsPerThread
                    if perThread.reduce(0, +) >= 120 { samples.append(perThread) }
                }
                return samples
            }
            _ = try await group.next()  // the load; the sampler runs until cancelled
            group.cancelAll()
            var samples: [[Int]] = []
            for try await result in group { samples = result ?? samples }
            return samples
        }
        #expect(loaded.count >= 5, "the load was sampled while 120 or more were in flight: \(loaded)")
        // Each thread has at least a fifth of what is in flight in most samples (ramps and the
        // drain move the split for a moment).
        let shared = loaded.filter { s in s.allSatisfy { $0 * 5 >= s.reduce(0, +) } }
        #expect(shared.count * 4 >= loaded.count * 3, "requests in flight per thread: \(loaded)")
        #expect(client.connectionsPerThread.allSatisfy { $0 > 0 }, "\(client.connectionsPerThread)")
        await client.shutdown()
    }

    /// 600 requests at once on one thread: once they are answered, the thread keeps no more
    /// easy handles for reuse than the pool's bound, and the next requests reuse them.
    @Test("after a burst, a thread keeps at most idleHandleLimit easy handles")
    func handlePoolBound() async throws {
        let server = try await NginxServer.start()
        let client = try Self.client(server, threads: 1, streams: 100)
        try await HTTP2ClientTests.loadExpectingOK(client, server, path: "/after100ms", total: 1_800, outstanding: 600)
        #expect(client.pooledHandlesPerThread == [CurlMultiLoop.idleHandleLimit], "600 finished, the rest were cleaned up")
        #expect(try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/ok")).status == 200)
        #expect(client.pooledHandlesPerThread == [CurlMultiLoop.idleHandleLimit], "a handle from the pool served it and went back")
        await client.shutdown()
    }
}
