import FCM
import FCMEmulator
import Foundation
import HTTP2
import TestSupport
import Testing

/// The FCM client behind a real egress proxy: tinyproxy on loopback in front of the emulator.
/// The service account's token endpoint is the emulator at `localhost`, FCM the emulator at
/// `127.0.0.1`, so the proxy's log tells the token exchange's tunnel from the sends'.
@Suite("FCM client behind an egress proxy (tinyproxy)", .serialized)
struct FCMProxyTests {
    /// A client of `f` through `proxy`, its token endpoint at `https://localhost:PORT/token`.
    static func client(
        _ f: EmulatorFixture, proxy: HTTPProxy?, _ configure: (inout FCMClient.Configuration) -> Void = { _ in }
    ) throws -> FCMClient {
        let account = ServiceAccount(
            projectID: f.account.projectID, clientEmail: f.account.clientEmail, privateKeyPEM: f.account.privateKeyPEM,
            tokenURI: "https://localhost:\(f.emulator.port)/token")
        var configuration = FCMClient.Configuration(serviceAccount: account)
        configuration.baseURL = f.emulator.baseURL
        configuration.caFile = f.caFile
        configuration.threads = 1
        configuration.retry.initialBackoff = .milliseconds(20)
        configuration.proxy = proxy
        configure(&configuration)
        return try FCMClient(configuration: configuration)
    }

    static func sendAll(_ client: FCMClient, count: Int) async -> [FCMClient.SendResult] {
        await withTaskGroup(of: FCMClient.SendResult.self) { group in
            for i in 0..<count { group.addTask { await client.send(message(token: "px-\(i)")) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    static func failures(_ results: [FCMClient.SendResult]) -> [String] {
        results.compactMap { if case .failure(let e) = $0.outcome { "\(e)" } else { nil } }
    }

    @Test("the token exchange and the sends each go through a CONNECT tunnel, HTTP/2 multiplexed inside it")
    func throughTheProxy() async throws {
        var faults = EmulatorFaults()
        faults.latencyMilliseconds = 100  // the sends overlap on the connection
        let f = try await EmulatorFixture.start(faults: faults)
        let proxy = try await TinyProxy.start(allowing: [f.emulator.port])
        let client = try Self.client(f, proxy: HTTPProxy(url: proxy.url))
        let port = f.emulator.port

        try await client.warmUp()
        #expect(try proxy.connectRequests() == ["localhost:\(port)"], "the token exchange's tunnel: \(proxy.log())")
        #expect(f.emulator.tokensIssued == 1 && f.emulator.messages.isEmpty)

        let results = await Self.sendAll(client, count: 50)
        #expect(Self.failures(results).isEmpty, "\(Self.failures(results).prefix(3))")
        #expect(f.emulator.messages.count == 50)
        // One tunnel for all 50 sends, and every connection the client opened was a tunnel.
        #expect(try proxy.connectRequests() == ["localhost:\(port)", "127.0.0.1:\(port)"], "\(proxy.log())")
        #expect(client.connections.opened == 2)
        // HTTP/1.1 answers one request at a time per connection: several at once is HTTP/2.
        #expect(f.emulator.maxConcurrentStreams >= 2, "\(f.emulator.maxConcurrentStreams) at most on the tunnel")
        await client.shutdown()

        // And the protocol libcurl negotiated inside the tunnel (ALPN) is h2.
        var configuration = HTTP2Client.Configuration(caFile: f.caFile)
        configuration.proxy = HTTPProxy(url: proxy.url)
        let http = try HTTP2Client(configuration: configuration)
        let response = try await http.send(HTTPRequest(method: "GET", url: f.emulator.baseURL + "/admin/stats"))
        #expect(response.status == 200 && response.httpVersion == "HTTP/2")
        #expect(try proxy.connectRequests().count == 3)
        await http.shutdown()
        await f.stop()
    }

    @Test(
        "hosts in no_proxy are reached directly, the others still through the proxy",
        arguments: [
            (["localhost"], ["127.0.0.1"]), (["127.0.0.1", "localhost"], []), (["*"], []),
            (["example.com", "10.0.0.0/8"], ["localhost", "127.0.0.1"]),
        ])
    func noProxy(bypass: [String], tunnelled: [String]) async throws {
        let f = try await EmulatorFixture.start()
        let proxy = try await TinyProxy.start(allowing: [f.emulator.port])
        let client = try Self.client(f, proxy: HTTPProxy(url: proxy.url, noProxy: bypass))
        try await client.warmUp()
        let results = await Self.sendAll(client, count: 5)
        #expect(Self.failures(results).isEmpty, "\(Self.failures(results).prefix(3))")
        #expect(try proxy.connectRequests() == tunnelled.map { "\($0):\(f.emulator.port)" }, "\(proxy.log())")
        await client.shutdown()
        await f.stop()
    }

    @Test("a proxy that is down is a transient failure naming it: retried past the budget, delivered once it is back")
    func proxyDown() async throws {
        let f = try await EmulatorFixture.start()
        let port = try FreePort.next()  // nothing listens there yet
        let proxyURL = "http://127.0.0.1:\(port)"

        // Classified: no answer from FCM, retried, the proxy named.
        let few = try Self.client(f, proxy: HTTPProxy(url: proxyURL)) { $0.retry.maxAttempts = 3 }
        let given = await few.send(message(token: "down-1"))
        await few.shutdown()
        guard case .failure(let error) = given.outcome else {
            Issue.record("delivered through a proxy that is down?")
            return
        }
        #expect(error.code == .transport && error.kind == .retryable && error.isRetryable, "\(error)")
        #expect(given.attempts == 3)
        #expect(error.message.contains("port \(port)") && error.message.contains("egress proxy \(proxyURL)"), "\(error.message)")

        // Held, not given up: while nothing answers, the worker waits on FCM and the 1 s budget
        // is not used up. The proxy comes back (on its port) after twice the budget.
        let client = try Self.client(f, proxy: HTTPProxy(url: proxyURL)) {
            $0.retry.maxBackoff = .milliseconds(100)
            $0.retry.budget = .seconds(1)
        }
        async let result = client.send(message(token: "down-2"))
        let deadline = ContinuousClock.now + .seconds(60)
        while (client.availability.waiting(at: .now) ?? .zero) < .seconds(2), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect((client.availability.waiting(at: .now) ?? .zero) >= .seconds(2), "the client knows it is waiting on FCM")
        let proxy = try await TinyProxy.start(allowing: [f.emulator.port], port: port)
        let delivered = await result
        // Delivered more than twice the budget after it was sent: the wait did not count. (How
        // many attempts that took depends on the machine: one starved for seconds makes 2.)
        #expect((try? delivered.outcome.get()) != nil, "\(delivered.outcome)")
        #expect(delivered.attempts >= 2)
        #expect(f.emulator.messages.map(\.token) == ["down-2"])
        #expect(try proxy.connectRequests().contains("127.0.0.1:\(f.emulator.port)"), "\(proxy.log())")
        await client.shutdown()
        await f.stop()
    }

    enum Refusal: String, CaseIterable, Sendable {
        /// The proxy's rules allow CONNECT to port 443 only.
        case forbiddenPort
        /// It wants credentials; none are given.
        case noCredentials
        /// It wants credentials; the wrong ones are given. tinyproxy answers 401 to those.
        case wrongCredentials
    }

    @Test(
        "a proxy that refuses the tunnel (403, 407, 401) is a configuration error, not retried, with no credentials shown",
        arguments: Refusal.allCases)
    func refused(_ refusal: Refusal) async throws {
        let f = try await EmulatorFixture.start()
        let proxy: TinyProxy
        var url: String
        switch refusal {
        case .forbiddenPort:
            proxy = try await TinyProxy.start(allowing: [443])
            url = proxy.url
        case .noCredentials, .wrongCredentials:
            proxy = try await TinyProxy.start(allowing: [f.emulator.port], credentials: ("pb", "s3cret"))
            url = proxy.url
            if refusal == .wrongCredentials { url = url.replacingOccurrences(of: "://", with: "://pb:not-it@") }
        }
        let client = try Self.client(f, proxy: HTTPProxy(url: url))
        let result = await client.send(message(token: "refused"))
        guard case .failure(let error) = result.outcome else {
            Issue.record("delivered through a proxy that refuses?")
            return
        }
        let status =
            switch refusal {
            case .forbiddenPort: 403
            case .noCredentials: 407
            case .wrongCredentials: 401
            }
        #expect(error.code == .proxy && error.kind == .configuration && !error.isRetryable, "\(error)")
        #expect(result.attempts == 1)
        #expect(error.message.contains("CONNECT answered \(status)") && error.message.contains("localhost:\(f.emulator.port)"), "\(error.message)")
        #expect(!error.description.contains("not-it"), "the password is not shown: \(error)")
        #expect(f.emulator.tokensIssued == 0)
        await client.shutdown()
        await f.stop()
    }

    @Test("credentials in the proxy URL, percent-encoded, are sent as Basic proxy authentication")
    func credentials() async throws {
        let f = try await EmulatorFixture.start()
        let proxy = try await TinyProxy.start(allowing: [f.emulator.port], credentials: ("pb", "s3cret.x"))
        // %2E is ".": libcurl decodes the URL's userinfo.
        let client = try Self.client(f, proxy: HTTPProxy(url: "http://pb:s3cret%2Ex@127.0.0.1:\(proxy.port)"))
        let result = await client.send(message(token: "with-credentials"))
        #expect((try? result.outcome.get()) != nil, "\(result.outcome)")
        #expect(try proxy.connectRequests() == ["localhost:\(f.emulator.port)", "127.0.0.1:\(f.emulator.port)"], "\(proxy.log())")
        await client.shutdown()
        await f.stop()
    }
}
