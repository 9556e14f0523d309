import Foundation
import HTTP2
import TestSupport
import Testing

@Suite("HTTP2Client against a real TLS HTTP/2 server (nginx)")
struct HTTP2ClientTests {
    static func client(_ server: NginxServer, streams: Int = 100, timeout: Duration = .seconds(30)) throws -> HTTP2Client {
        var config = HTTP2Client.Configuration(caFile: server.caFile)
        config.maxConcurrentStreams = streams
        config.requestTimeout = timeout
        return try HTTP2Client(configuration: config)
    }

    @Test("10,000 POSTs share one HTTP/2 connection")
    func tenThousandOnOneConnection() async throws {
        let server = try NginxServer()
        let client = try Self.client(server)
        let body = Array(#"{"message":{"token":"abc","android":{"notification":{"title_loc_key":"welcome_title"}}}}"#.utf8)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            var all: [Int] = []
            for i in 0..<10_000 {
                if i >= 200, let s = try await group.next() { all.append(s) }
                group.addTask {
                    let r = try await client.send(HTTPRequest(url: server.baseURL + "/v1/projects/p/messages:send",
                                                              headers: ["content-type": "application/json"], body: body))
                    #expect(r.httpVersion == "HTTP/2")
                    return r.status
                }
            }
            for try await s in group { all.append(s) }
            return all
        }
        await client.shutdown()
        #expect(statuses.count == 10_000)
        #expect(statuses.allSatisfy { $0 == 200 })

        let lines = try server.accessLogLines()
        #expect(lines.count == 10_000)
        #expect(lines.allSatisfy { $0.contains(" HTTP/2.0 POST ") }, "\(lines.first ?? "")")
        let connections = Set(lines.map { $0.split(separator: " ")[0] })
        #expect(connections.count == 1, "connections used: \(connections)")
    }

    @Test("with connections: 3, concurrent requests spread over three connections")
    func severalConnections() async throws {
        let server = try NginxServer()
        var config = HTTP2Client.Configuration(caFile: server.caFile)
        config.connections = 3
        let client = try HTTP2Client(configuration: config)
        let total = 3_000
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            var all: [Int] = []
            for i in 0..<total {
                if i >= 150, let s = try await group.next() { all.append(s) }
                group.addTask {
                    let r = try await client.send(HTTPRequest(url: server.baseURL + "/ok"))
                    #expect(r.httpVersion == "HTTP/2")
                    return r.status
                }
            }
            for try await s in group { all.append(s) }
            return all
        }
        await client.shutdown()
        #expect(statuses == Array(repeating: 200, count: total))

        // The access log's first field is nginx's connection serial number.
        var perConnection: [Substring: Int] = [:]
        for line in try server.accessLogLines() { perConnection[line.split(separator: " ")[0], default: 0] += 1 }
        #expect(perConnection.count == 3, "requests per connection: \(perConnection)")
        // The least busy connection takes each request: with 150 outstanding, none idles.
        #expect(perConnection.values.allSatisfy { $0 >= total / 6 }, "requests per connection: \(perConnection)")
    }

    @Test("a response slower than the timeout ends in a typed, retryable timeout error")
    func timeout() async throws {
        let server = try NginxServer()
        let client = try Self.client(server)
        await #expect {
            _ = try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/slow", timeout: .milliseconds(300)))
        } throws: { error in
            let e = error as! HTTP2ClientError
            return e.code == .timeout && e.isRetryable && e.curlCode == 28
        }
        await client.shutdown()
    }

    @Test("when the server drops the connection mid-flight, every request fails retryably and the client reconnects")
    func connectionDroppedMidFlight() async throws {
        let server = try NginxServer()
        let client = try Self.client(server)
        let status = try Self.client(server)  // watches nginx on its own connection
        #expect(try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/ok")).status == 200)

        let inFlight = 50
        try await withThrowingTaskGroup(of: HTTP2ClientError?.self) { group in
            for _ in 0..<inFlight {
                group.addTask {
                    do {
                        _ = try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/slow"))
                        return nil
                    } catch {
                        return error as? HTTP2ClientError
                    }
                }
            }
            // Wait until nginx is working on all of them (stub_status counts active requests).
            let deadline = ContinuousClock.now + .seconds(20)
            while ContinuousClock.now < deadline {
                let text = try await status.send(HTTPRequest(method: "GET", url: server.baseURL + "/nginx_status")).bodyText
                let writing = text.split(separator: " ").drop { $0 != "Writing:" }.dropFirst().first.flatMap { Int($0) } ?? 0
                if writing > inFlight { break }  // + the status request itself
                try await Task.sleep(for: .milliseconds(20))
            }
            try server.killWorkers()

            var errors: [HTTP2ClientError] = []
            for try await e in group { if let e { errors.append(e) } }
            #expect(errors.count == inFlight, "every in-flight request failed")
            #expect(errors.allSatisfy { $0.isRetryable }, "\(errors.first.map(String.init(describing:)) ?? "")")
            #expect(errors.allSatisfy { $0.code == .connectionClosed }, "\(Set(errors.map(\.code)))")
        }
        // A new worker is up; the client opens a new connection by itself.
        var reconnected = false
        for _ in 0..<50 where !reconnected {
            reconnected = (try? await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/ok")))?.status == 200
            if !reconnected { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(reconnected)
        await client.shutdown()
        await status.shutdown()
    }

    @Test("4xx and 5xx statuses come back with their bodies and headers intact")
    func errorStatuses() async throws {
        let server = try NginxServer()
        let client = try Self.client(server)
        let unavailable = try await client.send(HTTPRequest(url: server.baseURL + "/status/503", body: Array("{}".utf8)))
        #expect(unavailable.status == 503)
        #expect(unavailable.headers["retry-after"] == "7")
        #expect(unavailable.headers["X-Pushbridge-Test"] == "yes")
        #expect(unavailable.bodyText == #"{"error":{"code":503,"message":"The service is currently unavailable.","status":"UNAVAILABLE"}}"#)
        let notFound = try await client.send(HTTPRequest(url: server.baseURL + "/status/404", body: Array("{}".utf8)))
        #expect(notFound.status == 404)
        #expect(notFound.bodyText.contains(#""errorCode":"UNREGISTERED""#))
        #expect(notFound.headers["content-type"] == "application/json")
        await client.shutdown()
    }

    @Test("a server whose CA is not trusted fails with a TLS error that says so")
    func untrustedCA() async throws {
        let server = try NginxServer()
        let client = try HTTP2Client(configuration: .init(caFile: nil))  // system CAs only
        await #expect {
            _ = try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/ok"))
        } throws: { error in
            let e = error as! HTTP2ClientError
            return e.code == .tls && !e.isRetryable && e.message.contains("CA")
        }
        await client.shutdown()
    }

    @Test("shutdown fails pending and in-flight requests with .shutdown; later sends fail at once")
    func shutdownFailsPending() async throws {
        let server = try NginxServer()
        let client = try Self.client(server, streams: 2)
        try await withThrowingTaskGroup(of: HTTP2ClientError.Code?.self) { group in
            for _ in 0..<6 {  // 2 on the wire, 4 queued
                group.addTask {
                    do {
                        _ = try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/slow"))
                        return nil
                    } catch {
                        return (error as? HTTP2ClientError)?.code
                    }
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            await client.shutdown()
            var codes: [HTTP2ClientError.Code?] = []
            for try await c in group { codes.append(c) }
            #expect(codes.count == 6 && codes.allSatisfy { $0 == .shutdown })
        }
        await #expect(throws: HTTP2ClientError.self) {
            _ = try await client.send(HTTPRequest(method: "GET", url: server.baseURL + "/ok"))
        }
    }
}
