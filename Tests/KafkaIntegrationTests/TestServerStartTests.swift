import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The harness that starts test servers: a CI run once lost tansu to a port taken between
/// "free" and tansu's bind, and reported only "nothing listens" 20 s later.
@Suite("Starting test servers")
struct TestServerStartTests {
    @Test("ports for test servers lie below the kernel's ephemeral range, so bind-to-0 and outgoing connections never take them")
    func portsOutsideEphemeralRange() throws {
        let range = try String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)
        let low = try #require(range.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) })
        let ports = try (0..<200).map { _ in try FreePort.next() }
        #expect(Set(ports).count == ports.count, "never the same port twice")
        #expect(ports.allSatisfy { $0 >= 1024 && $0 < low }, "\(ports.filter { $0 >= low })")
        // What the kernel hands out for port 0 comes from the other side of that line.
        let kernelChosen = try (0..<50).map { _ in try BoundSocket(port: 0) }
        #expect(kernelChosen.allSatisfy { $0.port >= low })
    }

    @Test("a server whose port is taken exits; the wait fails at once with its log, not at the timeout")
    func takenPortFailsFast() throws {
        let port = try FreePort.next()
        let holder = try BoundSocket(port: port)  // bound, not listening: as an outgoing connection's local port
        let url = "tcp://127.0.0.1:\(holder.port)"
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-taken-\(port).log").path
        defer { try? FileManager.default.removeItem(atPath: log) }
        let tansu = try ChildProcess(
            executable: Repository.tool("bin/tansu"),
            arguments: ["broker", "--listener-url", url, "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"],
            logFile: log)
        let started = ContinuousClock.now
        let error = #expect(throws: ChildProcess.ServerExited.self) { try tansu.waitUntilListening(port: port, timeout: .seconds(60)) }
        #expect(error?.addressInUse == true, "\(error?.log ?? "")")
        #expect(ContinuousClock.now - started < .seconds(30), "noticed the exit, did not wait out the timeout")
    }

    @Test("a server that finds its port taken after all is started again on another port")
    func takenPortRetried() throws {
        var firstPort: Int?
        var holder: BoundSocket?
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-retry-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: log) }
        let (port, tansu) = try FreePort.startServer { port in
            if firstPort == nil {
                firstPort = port
                holder = try BoundSocket(port: port)  // taken between "free" and tansu's bind
            }
            let url = "tcp://127.0.0.1:\(port)"
            let tansu = try ChildProcess(
                executable: Repository.tool("bin/tansu"),
                arguments: ["broker", "--listener-url", url, "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"],
                logFile: log.path + "-\(port)")
            try tansu.waitUntilListening(port: port, timeout: .seconds(60))
            return (port, tansu)
        }
        #expect(holder != nil && port != firstPort)
        #expect(tansu.isRunning && FreePort.canConnect(port: port))
        tansu.terminate()
    }

    @Test("what holds a port is named from /proc: the socket's state and the process")
    func portHolders() throws {
        let socket = try BoundSocket(port: FreePort.next())
        #expect(PortHolders.describe(port: socket.port).contains("one bound but not listening does not show"))
        try socket.listen()
        // A server started now gets none of the test process's descriptors: with a copy, it would
        // keep the port bound after the test closed it.
        let child = try ChildProcess(executable: "/bin/sleep", arguments: ["30"], logFile: "/dev/null")
        defer { child.terminate() }
        let described = PortHolders.describe(port: socket.port)
        #expect(described == "LISTEN on :\(socket.port), held by pid \(getpid()) (\(CommandLine.arguments.joined(separator: " ").prefix(200)))")
    }
}

/// A TCP socket bound to 127.0.0.1:`port` (0: the kernel chooses), not listening; closed on release.
private final class BoundSocket {
    let fd: Int32
    let port: Int

    init(port: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) == 0 && getsockname(fd, $0, &len) == 0 }
        }
        guard fd >= 0, bound else {
            close(fd)
            throw TestSupportError("cannot bind 127.0.0.1:\(port)")
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: addr.sin_port))
    }

    func listen() throws {
        guard Glibc.listen(fd, 1) == 0 else { throw TestSupportError("cannot listen on 127.0.0.1:\(port)") }
    }

    deinit { close(fd) }
}
