import Foundation
import TestSupport
import Testing

@testable import HTTP2

/// One connection of the nghttp2 engine, driven by hand: poll its socket for what it asks, hand
/// it the events, until it is up or closed.
@Suite("NativeConnection: connecting, TLS and HTTP/2 against nginx")
struct NativeConnectionTests {
    /// Polls and handles until `connection` is ready or closed, 10 s at most.
    static func drive(_ connection: NativeConnection, context: TLSContext) -> NativeConnection.Phase {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        let deadline = ContinuousClock.now + .seconds(10)
        while connection.phase != .ready && connection.phase != .closed && ContinuousClock.now < deadline {
            var fd = pollfd(fd: connection.socket, events: connection.pollEvents, revents: 0)
            if poll(&fd, 1, 100) > 0 { connection.handle(revents: fd.revents, context: context, buffer: buffer) }
        }
        return connection.phase
    }

    static func address(port: Int) throws -> NativeResolver.Address {
        var resolver = NativeResolver()
        return try #require(try resolver.resolve("127.0.0.1", port: port).get().first)
    }

    @Test("an address that refuses the connection: the next one is tried, and the connection comes up on it")
    func nextAddress() async throws {
        let server = try await NginxServer.start()
        let refusing = try Self.address(port: try FreePort.next())
        let target = try #require(NativeTarget(url: server.baseURL + "/ok"))
        let context = try TLSContext(caFile: server.caFile)
        let connection = NativeConnection(target: target, addresses: [refusing, try Self.address(port: server.port)], maxStreams: 100)
        #expect(Self.drive(connection, context: context) == .ready, "\(connection.closeError.map(String.init(describing:)) ?? "")")
        #expect(connection.freeStreams == 100)
        connection.close(nil)
    }

    @Test("every address refuses: the connection closes with couldNotConnect, retryable")
    func noAddressTakesIt() throws {
        let target = try #require(NativeTarget(url: "https://127.0.0.1:9/ok"))
        let context = try TLSContext(caFile: nil)
        let connection = NativeConnection(
            target: target, addresses: [try Self.address(port: try FreePort.next()), try Self.address(port: try FreePort.next())], maxStreams: 100)
        #expect(Self.drive(connection, context: context) == .closed)
        #expect(
            connection.closeError?.code == .couldNotConnect && connection.closeError?.isRetryable == true,
            "\(String(describing: connection.closeError))")
    }
}
