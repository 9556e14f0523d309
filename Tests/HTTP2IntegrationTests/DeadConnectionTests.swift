import Foundation
import HTTP2
import Synchronization
import TestSupport
import Testing

/// Connections that go silent: nginx behind a relay whose open connections stop passing anything
/// either way, without a FIN or RST (``SilentRelay``), as a path behind a NAT or a proxy tunnel
/// dies. libcurl 7.88 alone puts every request, and every retry, on such a connection until the
/// kernel gives up (measured in docs/reliability.md).
@Suite("HTTP2Client: a connection that goes silent is closed as dead and replaced")
struct DeadConnectionTests {
    /// A one-thread client of nginx through `relay`, reporting dead connections to `reports`.
    static func client(
        _ server: NginxServer, liveness: Duration, timeout: Duration = .seconds(30), reports: Reports? = nil, engine: HTTP2Client.Engine
    ) throws -> HTTP2Client {
        var config = HTTP2Client.Configuration(caFile: server.caFile)
        config.engine = engine
        config.threads = 1
        config.requestTimeout = timeout
        config.livenessTimeout = liveness
        if let reports { config.onDeadConnection = { dead in reports.list.withLock { $0.append(dead) } } }
        return try HTTP2Client(configuration: config)
    }

    /// `count` requests at once; each one's error (nil for an answer) and how long it took.
    static func sendAll(_ client: HTTP2Client, _ url: String, count: Int) async -> [(error: HTTP2ClientError?, took: Duration)] {
        await withTaskGroup(of: (HTTP2ClientError?, Duration).self) { group in
            for _ in 0..<count {
                group.addTask {
                    let started = ContinuousClock.now
                    do {
                        _ = try await client.send(HTTPRequest(method: "GET", url: url))
                        return (nil, .now - started)
                    } catch {
                        return (error as? HTTP2ClientError, .now - started)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test(
        "requests waiting on a silent connection fail as deadConnection after the liveness timeout, it is reported once, and the next request goes on a new connection",
        arguments: HTTP2Client.Engine.allCases)
    func silentConnectionIsReplaced(engine: HTTP2Client.Engine) async throws {
        let server = try await NginxServer.start()
        let relay = try await SilentRelay.start(to: server.port)
        let reports = Reports()
        let client = try Self.client(server, liveness: .seconds(1), reports: reports, engine: engine)
        let url = "https://127.0.0.1:\(relay.port)/ok"
        #expect(try await client.send(HTTPRequest(method: "GET", url: url)).status == 200)
        try await relay.silence()

        let results = await Self.sendAll(client, url, count: 5)
        #expect(results.allSatisfy { $0.error?.code == .deadConnection && $0.error?.isRetryable == true }, "\(results)")
        // Closed within the liveness timeout and a check, far before the 30 s request timeout.
        #expect(results.allSatisfy { $0.took < .seconds(10) }, "\(results.map(\.took))")
        let report = try #require(reports.list.withLock { $0 }.only)
        #expect(report.authority == "127.0.0.1:\(relay.port)")
        #expect(report.requests == 5)
        #expect(report.silentFor >= .seconds(1))
        #expect(client.deadConnectionsClosed == 1)

        let after = await Self.sendAll(client, url, count: 5)
        #expect(after.allSatisfy { $0.error == nil }, "\(after)")
        #expect(client.connectionsOpened == 2)
        #expect(reports.list.withLock { $0.count } == 1)
        await client.shutdown()
    }

    /// The root of the 15-minute stall: a request timing out on a dead connection left it in
    /// libcurl's pool, and the retry took it again, and timed out again.
    @Test(
        "a request timing out on a connection silent since it was sent closes that connection, so the retry gets a new one",
        arguments: HTTP2Client.Engine.allCases)
    func timeoutOnASilentConnectionClosesIt(engine: HTTP2Client.Engine) async throws {
        let server = try await NginxServer.start()
        let relay = try await SilentRelay.start(to: server.port)
        let client = try Self.client(server, liveness: .seconds(60), timeout: .seconds(1), engine: engine)
        let url = "https://127.0.0.1:\(relay.port)/ok"
        #expect(try await client.send(HTTPRequest(method: "GET", url: url)).status == 200)
        try await relay.silence()

        let timedOut = await Self.sendAll(client, url, count: 1)
        #expect(timedOut.first?.error?.code == .deadConnection, "\(timedOut)")
        let retried = await Self.sendAll(client, url, count: 3)
        #expect(retried.allSatisfy { $0.error == nil }, "\(retried)")
        #expect(client.connectionsOpened == 2)
        await client.shutdown()
    }

    @Test(
        "a connection that keeps answering is not judged, even with one request silent for longer than the timeout",
        arguments: HTTP2Client.Engine.allCases)
    func answersKeepAConnectionAlive(engine: HTTP2Client.Engine) async throws {
        let server = try await NginxServer.start()
        let client = try Self.client(server, liveness: .milliseconds(800), timeout: .seconds(3), engine: engine)
        #expect(try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/ok")).status == 200)
        async let slow = Self.sendAll(client, server.baseURL + "/slow", count: 1)
        // Other requests on the same connection answer meanwhile, one after another: each is
        // started by the last one's completion, on the client's own thread, so a loaded
        // machine's task scheduling leaves no gap.
        let chain = AnswerChain(client, url: server.baseURL + "/ok")
        chain.next()
        let result = await slow
        chain.stop()
        #expect(result.first?.error?.code == .timeout, "\(result)")
        #expect(chain.answers > 10)
        #expect(client.deadConnectionsClosed == 0)
        #expect(client.connectionsOpened == 1)
        await client.shutdown()
    }

    /// The nghttp2 engine asks a connection that has been silent for half the liveness timeout
    /// with a PING: a live server answers it, so one slow answer is no sign of death. libcurl
    /// 7.88 sends no PING on request: it judges by silence alone.
    @Test("nghttp2: a slow answer on a connection that answers PINGs is not judged dead")
    func pingKeepsASlowConnectionAlive() async throws {
        let server = try await NginxServer.start()
        let reports = Reports()
        let client = try Self.client(server, liveness: .milliseconds(600), timeout: .seconds(3), reports: reports, engine: .nghttp2)
        let result = await Self.sendAll(client, server.baseURL + "/slow", count: 1)
        #expect(result.first?.error?.code == .timeout, "\(result)")
        #expect(client.deadConnectionsClosed == 0 && reports.list.withLock { $0.isEmpty })
        #expect(try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/ok")).status == 200)
        #expect(client.connectionsOpened == 1, "the same connection serves the next request")
        await client.shutdown()
    }

    @Test(
        "an idle connection is never judged: silent with nothing waiting, it stays and serves the next request",
        arguments: HTTP2Client.Engine.allCases)
    func idleConnectionStays(engine: HTTP2Client.Engine) async throws {
        let server = try await NginxServer.start()
        let client = try Self.client(server, liveness: .milliseconds(300), engine: engine)
        #expect(try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/ok")).status == 200)
        try await Task.sleep(for: .seconds(2))
        #expect(client.openConnections == 1)
        #expect(try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/ok")).status == 200)
        #expect(client.deadConnectionsClosed == 0)
        #expect(client.connectionsOpened == 1)
        await client.shutdown()
    }
}

/// Requests sent one after another until stopped, each started by the last one's completion.
final class AnswerChain: Sendable {
    let client: HTTP2Client
    let url: String
    private let state = Mutex((answers: 0, stopped: false))

    init(_ client: HTTP2Client, url: String) {
        (self.client, self.url) = (client, url)
    }

    var answers: Int { state.withLock { $0.answers } }

    func next() {
        guard !state.withLock({ $0.stopped }) else { return }
        client.start(HTTPRequest(method: "GET", url: url)) { [self] result in
            if case .success = result { state.withLock { $0.answers += 1 } }
            next()
        }
    }

    func stop() { state.withLock { $0.stopped = true } }
}

/// The dead connections a client reported.
final class Reports: Sendable {
    let list = Mutex<[DeadConnection]>([])
}

extension Array {
    /// The one element, if there is exactly one.
    fileprivate var only: Element? { count == 1 ? first : nil }
}
