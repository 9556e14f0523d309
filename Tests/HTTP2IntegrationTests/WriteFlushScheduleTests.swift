import Foundation
import TestSupport
import Testing

@testable import HTTP2

#if canImport(Glibc)
    import Glibc
#endif

/// Whether the loop corks its sockets and when it flushes them (no I/O).
@Suite("WriteFlushSchedule: the hold follows answer times; corked writes wait at most the hold, from the first one")
struct WriteFlushScheduleTests {
    let t0 = ContinuousClock.now

    /// A schedule that has seen answers of `time`.
    func schedule(answers time: Duration, maxHold: Duration = .milliseconds(10)) -> WriteFlushSchedule {
        var schedule = WriteFlushSchedule(maxHold: maxHold)
        _ = schedule.answered(after: time)
        return schedule
    }

    @Test("a tenth of the answer time, at most the longest hold; answers under 50 ms are not held")
    func holdFollowsAnswers() {
        #expect(WriteFlushSchedule(maxHold: .milliseconds(10)).hold == .zero, "no answer yet: nothing corked")
        #expect(schedule(answers: .milliseconds(50)).hold == .milliseconds(5))
        #expect(schedule(answers: .milliseconds(300)).hold == .milliseconds(10), "capped")
        let fast = schedule(answers: .milliseconds(40))
        #expect(!fast.corks && fast.hold == .zero)
        let short = schedule(answers: .milliseconds(300), maxHold: .milliseconds(2))
        #expect(short.corks && short.hold == .milliseconds(2), "a longest hold under 5 ms still corks, and holds that long")
        var off = schedule(answers: .milliseconds(300), maxHold: .zero)
        let changed = off.answered(after: .seconds(1))
        #expect(!off.corks && off.hold == .zero && !changed, "a longest hold of zero never corks")
    }

    @Test("corking starts and stops as the average answer time crosses 50 ms and 25 ms")
    func corkingFollowsTheAverage() {
        var schedule = WriteFlushSchedule(maxHold: .milliseconds(10))
        let changed = schedule.answered(after: .milliseconds(20))
        #expect(!changed && !schedule.corks, "20 ms: not corked, no change")
        var changes = 0
        for _ in 0..<200 where schedule.answered(after: .milliseconds(400)) { changes += 1 }
        #expect(changes == 1 && schedule.corks && schedule.hold == .milliseconds(10), "the average moved up to 400 ms: corked once, held the most")
        schedule.wrote(at: t0)
        // Answers of 35 ms bring the average below 50 ms but not below 25: still corked.
        var changedAt35 = 0
        for _ in 0..<200 where schedule.answered(after: .milliseconds(35)) { changedAt35 += 1 }
        #expect(changedAt35 == 0)
        #expect(schedule.corks && schedule.hold > .microseconds(3_490) && schedule.hold < .microseconds(3_510))
        #expect(schedule.timeLeft(at: t0) != nil, "writes still wait")
        var uncorked = false
        for _ in 0..<200 where schedule.answered(after: .milliseconds(1)) { uncorked = true }
        #expect(uncorked && !schedule.corks && schedule.hold == .zero)
        #expect(schedule.timeLeft(at: t0) == nil, "uncorking sent what waited")
    }

    @Test("nothing waits until libcurl runs; then the hold counts from the first run, not the last")
    func holdFromFirstWrite() {
        var schedule = schedule(answers: .milliseconds(100))
        #expect(schedule.corks)
        #expect(schedule.timeLeft(at: t0) == nil && !schedule.isDue(at: t0 + .seconds(5)), "nothing written, nothing to flush")
        schedule.wrote(at: t0)
        schedule.wrote(at: t0 + .milliseconds(6))
        #expect(schedule.timeLeft(at: t0 + .milliseconds(6)) == .milliseconds(4), "later writes do not push the flush back")
        #expect(!schedule.isDue(at: t0 + .milliseconds(9)))
        #expect(schedule.isDue(at: t0 + .milliseconds(10)))
        #expect(schedule.timeLeft(at: t0 + .milliseconds(30)) == .zero, "overdue is due now, never negative")
        schedule.flushed()
        #expect(schedule.timeLeft(at: t0 + .milliseconds(30)) == nil)
        schedule.wrote(at: t0 + .milliseconds(31))
        #expect(schedule.timeLeft(at: t0 + .milliseconds(31)) == .milliseconds(10), "a new hold after a flush")
    }

    @Test("uncorked, writes never wait and the loop is never asked to wake")
    func uncorkedWritesDoNotWait() {
        var schedule = schedule(answers: .milliseconds(10))
        schedule.wrote(at: t0)
        #expect(schedule.timeLeft(at: t0) == nil && !schedule.isDue(at: t0 + .seconds(1)))
        #expect(WriteFlushSchedule(maxHold: .milliseconds(-5)).maxHold == .zero, "a negative hold is none")
    }
}

/// `SIOCOUTQNSD` (linux/sockios.h, 0x894B): the bytes in a socket's send queue not yet sent.
private let siocOutqNotSent: UInt = 0x894B

/// ``CurlConnectionCounter`` on a real loopback TCP connection, without libcurl.
@Suite("CurlConnectionCounter corks the sockets it is given and flushes them")
struct SocketCorkTests {
    /// Runs `body` with a connected pair on loopback (client, server), closed afterwards.
    static func withConnectedPair(_ body: (Int32, Int32) throws -> Void) throws {
        let (client, server) = try connectedPair()
        defer {
            close(client)
            close(server)
        }
        try body(client, server)
    }

    /// A connected pair on loopback: (client, server).
    static func connectedPair() throws -> (Int32, Int32) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                guard bind(listener, sa, length) == 0, listen(listener, 1) == 0, getsockname(listener, sa, &length) == 0 else {
                    throw POSIXError(.EADDRNOTAVAIL)
                }
            }
        }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try withUnsafePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                guard connect(client, sa, length) == 0 else { throw POSIXError(.ECONNREFUSED) }
            }
        }
        return (client, accept(listener, nil, nil))
    }

    static func notSent(_ fd: Int32) -> Int32 {
        var bytes: Int32 = -1
        _ = ioctl(fd, siocOutqNotSent, &bytes)
        return bytes
    }

    /// What a corked socket is written stays in its send queue (the kernel sends a partial
    /// segment only after 200 ms, tcp(7)) until ``CurlConnectionCounter/flushWrites()``, which
    /// sends it at once and corks the socket again.
    @Test("a write waits in the corked socket until flushWrites, which leaves it corked, or until uncorked")
    func flushSends() throws {
        try Self.withConnectedPair { client, server in
            let counter = CurlConnectionCounter(corkable: true)
            counter.made(client, tcp: true)
            #expect(counter.corkedNow.isEmpty && !CorkedConnectionTests.isCorked(client), "kept, not corked until told")
            counter.setCorking(true)
            #expect(counter.corkedNow == [client] && CorkedConnectionTests.isCorked(client))
            let frame = Array("a frame of a request".utf8)
            #expect(send(client, frame, frame.count, 0) == frame.count)
            #expect(Self.notSent(client) == Int32(frame.count), "held by the cork")
            counter.flushWrites()
            #expect(Self.notSent(client) == 0, "sent by the flush")
            var received = [UInt8](repeating: 0, count: 64)
            #expect(recv(server, &received, received.count, 0) == frame.count)
            #expect(CorkedConnectionTests.isCorked(client), "corked again for the next writes")
            #expect(send(client, frame, frame.count, 0) == frame.count && Self.notSent(client) == Int32(frame.count))
            counter.setCorking(false)
            #expect(Self.notSent(client) == 0 && !CorkedConnectionTests.isCorked(client), "uncorking sends what was held")
            #expect(recv(server, &received, received.count, 0) == frame.count)
            counter.closing(client)
            #expect(counter.corkedNow.isEmpty && counter.open.load(ordering: .relaxed) == 0)
        }
    }

    @Test("a counter that may not cork, and sockets other than TCP, are counted, never corked")
    func onlyTCPWhenCorkable() throws {
        try Self.withConnectedPair { client, server in
            let plain = CurlConnectionCounter()
            plain.made(client, tcp: true)
            plain.setCorking(true)
            #expect(plain.corkedNow.isEmpty && !CorkedConnectionTests.isCorked(client) && plain.opened.load(ordering: .relaxed) == 1)
            let corked = CurlConnectionCounter(corkable: true)
            corked.setCorking(true)
            corked.made(server, tcp: false)
            #expect(corked.corkedNow.isEmpty && !CorkedConnectionTests.isCorked(server) && corked.open.load(ordering: .relaxed) == 1)
        }
    }
}

/// Corked connections against a real TLS HTTP/2 server (nginx).
@Suite("HTTP2Client's corked connections")
struct CorkedConnectionTests {
    static func client(_ server: NginxServer, hold: Duration) throws -> HTTP2Client {
        var config = HTTP2Client.Configuration(caFile: server.caFile)
        config.threads = 1
        config.writeHold = hold
        config.idleConnectionTimeout = .seconds(600)
        return try HTTP2Client(configuration: config)
    }

    static func isCorked(_ fd: Int32) -> Bool {
        var value: Int32 = 0
        var size = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, Int32(IPPROTO_TCP), TCP_CORK, &value, &size) == 0 && value != 0
    }

    /// Answers of 100 ms: the hold is 10 ms, and a request sent alone is held by its corked
    /// socket until the loop flushes it (or the kernel, after 200 ms): the loop flushes at least
    /// once per lone request after the first answer, as libcurl wrote each and read each
    /// answer. Not timed: a loaded machine stretches every request.
    @Test("with answers of 100 ms every connection is corked, and the loop flushes what a request sent alone wrote")
    func loneRequestsAreFlushed() async throws {
        let server = try await NginxServer.start()
        let client = try Self.client(server, hold: .milliseconds(10))
        let requests = 20
        for _ in 0..<requests {
            let response = try await client.send(HTTPRequest(url: server.baseURL + "/after100ms", body: Array("{}".utf8)))
            #expect(response.status == 200)
        }
        #expect(client.writeFlushes >= requests - 1, "\(client.writeFlushes) flushes for \(requests) lone requests")
        let corked = client.corkedSockets
        #expect(corked.count == client.openConnections && !corked.isEmpty, "corked \(corked), open \(client.openConnections)")
        #expect(corked.allSatisfy(Self.isCorked), "TCP_CORK is set on \(corked)")
        // Many at once on the same corked connections: all answered.
        try await HTTP2ClientTests.loadExpectingOK(client, server, path: "/after100ms", total: 600, outstanding: 200)
        await client.shutdown()
    }

    @Test("with no hold, nothing is corked and requests go as before")
    func noHold() async throws {
        let server = try await NginxServer.start()
        let client = try Self.client(server, hold: .zero)
        try await HTTP2ClientTests.loadExpectingOK(client, server, path: "/after100ms", total: 200, outstanding: 50)
        #expect(client.openConnections > 0 && client.corkedSockets.isEmpty && client.writeFlushes == 0)
        await client.shutdown()
    }
}
