import HTTP2
import TestSupport
import Testing

/// When a request's time runs out, in both engines (nginx). Its ``HTTPRequest/notAfter`` is an
/// instant it is never sent at or after, whatever it waits for (its pacing slot, a stream): the
/// FCM client gives a capped push's send limit as it (`FCMClient.send(…, deadline:)`), and the
/// rules count a push as deliverable only until then (docs/rules-state.md), so one sent later
/// would escape its cap. Its timeout counts from when it may go: a wait for its pacing slot is
/// the client's own rate, not the server's time, and a backlog longer than the timeout is sent.
@Suite("HTTP2Client: a request's notAfter and timeout while it waits for its pacing slot (nginx)")
struct RequestDeadlineTests {
    /// Four paced requests at two a second: their slots are about 0, 0.5, 1.0 and 1.5 s away.
    static func sendFour(
        _ client: HTTP2Client, _ server: NginxServer, timeout: Duration?, notAfter: ContinuousClock.Instant?
    ) async -> [Result<Int, HTTP2ClientError>] {
        await withTaskGroup(of: Result<Int, HTTP2ClientError>.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let request = HTTPRequest(
                        url: server.baseURL + "/echo", body: Array("{}".utf8), timeout: timeout, notAfter: notAfter, paced: true)
                    do throws(HTTP2ClientError) {
                        return .success(try await client.send(request).status)
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    /// A client of `server` at two paced requests a second, its connection up (the slots are
    /// not spent waiting for it).
    static func pacedClient(_ server: NginxServer, engine: HTTP2Client.Engine) async throws -> HTTP2Client {
        let client = try HTTP2ClientTests.client(server, engine: engine)
        #expect(try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/ok")).status == 200)
        client.setRate(2)
        return client
    }

    @Test("a paced request whose slot comes after its notAfter fails with .timeout and is never sent", arguments: HTTP2Client.Engine.allCases)
    func pacedPastNotAfter(engine: HTTP2Client.Engine) async throws {
        let server = try await NginxServer.start()
        let client = try await Self.pacedClient(server, engine: engine)
        let clock = ContinuousClock()
        let start = clock.now
        let results = await Self.sendFour(client, server, timeout: nil, notAfter: start + .milliseconds(700))
        // Past the last slot, so that a request sent late would have arrived by now.
        try await Task.sleep(until: start + .seconds(2.5), clock: clock)
        let arrivals = try server.arrivals(uri: "/echo")
        let failures = results.compactMap { result -> HTTP2ClientError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        #expect(arrivals.count <= 2, "the requests whose slot came after their notAfter were sent: \(arrivals.count) arrived")
        #expect(failures.count >= 2 && failures.allSatisfy { $0.code == .timeout }, "\(results)")
        #expect(results.count - failures.count <= arrivals.count)
        await client.shutdown()
    }

    @Test(
        "a paced request's timeout counts from its slot: a wait longer than the timeout is sent and answered",
        arguments: HTTP2Client.Engine.allCases)
    func pacingWaitIsNotTimeout(engine: HTTP2Client.Engine) async throws {
        let server = try await NginxServer.start()
        let client = try await Self.pacedClient(server, engine: engine)
        // The last two wait about 1.0 and 1.5 s for their slots, longer than their 0.7 s; nginx
        // answers /echo in 50 ms.
        let results = await Self.sendFour(client, server, timeout: .milliseconds(700), notAfter: nil)
        #expect(results.allSatisfy { (try? $0.get()) == 200 }, "\(results)")
        #expect(try server.arrivals(uri: "/echo").count == 4)
        await client.shutdown()
    }
}
