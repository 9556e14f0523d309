import HTTP2
import TestSupport
import Testing

/// A request's timeout counts from when it is handed to the client, whatever it waits for
/// before it goes on the wire (its pacing slot, a stream, a connection): a request past it is
/// failed with `.timeout` and never sent. The FCM client turns a capped push's send limit into
/// its requests' timeouts (`FCMClient.send(…, deadline:)`), and the rules count a push as
/// deliverable only until then (docs/rules-state.md): one sent later would escape its cap.
@Suite("HTTP2Client: a request's timeout counts from when it is handed over (nginx)")
struct RequestDeadlineTests {
    @Test("a paced request whose slot comes after its timeout fails with .timeout and is never sent", arguments: HTTP2Client.Engine.allCases)
    func pacedPastItsTimeout(engine: HTTP2Client.Engine) async throws {
        let server = try await NginxServer.start()
        let client = try HTTP2ClientTests.client(server, engine: engine)
        // A connection up first: the slots are not spent waiting for it.
        #expect(try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/ok")).status == 200)
        // Two a second: the four requests' slots are about 0, 0.5, 1.0 and 1.5 s away; each
        // must be answered within 0.7 s of being handed over.
        client.setRate(2)
        let clock = ContinuousClock()
        let start = clock.now
        let results = await withTaskGroup(of: Result<Int, HTTP2ClientError>.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    let request = HTTPRequest(url: server.baseURL + "/echo", body: Array("{}".utf8), timeout: .milliseconds(700), paced: true)
                    do throws(HTTP2ClientError) {
                        return .success(try await client.send(request).status)
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        // Past the last slot, so that a request sent late would have arrived by now.
        try await Task.sleep(until: start + .seconds(2.5), clock: clock)
        let arrivals = try server.arrivals(uri: "/echo")
        let failures = results.compactMap { result -> HTTP2ClientError? in
            if case .failure(let error) = result { return error }
            return nil
        }
        #expect(arrivals.count <= 2, "the requests whose slot came after their timeout were sent: \(arrivals.count) arrived")
        #expect(failures.count >= 2 && failures.allSatisfy { $0.code == .timeout }, "\(results)")
        #expect(results.count - failures.count <= arrivals.count)
        await client.shutdown()
    }
}
