import Foundation
import Synchronization
import Threading

#if canImport(Glibc)
    import Glibc
#endif

/// Loopback ports for the servers tests and benchmarks start.
///
/// They come from below the kernel's ephemeral range (`net.ipv4.ip_local_port_range`, 32768–60999
/// by default), which the kernel never hands out by itself. A port taken from inside that range
/// (bind to port 0, then release) can be taken again before the server binds it: by the mock
/// cluster's brokers and other servers binding port 0, or as the local port of an outgoing
/// connection. The server then exits with "Address in use" (a CI run lost tansu that way).
public enum FreePort {
    /// Ports handed out in this process, never handed out twice: two servers started in parallel
    /// would otherwise share one (the second one's nginx exits, and its test talks to the first
    /// one's).
    private static let handedOut = Mutex<Set<Int>>([])

    /// The ports handed out: the 12,000 below the ephemeral range (or above 1023).
    static let range: ClosedRange<Int> = {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let low = text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
        return max(1024, low - 12_000)...max(1024, low - 1)
    }()

    /// A port that is free now, outside the ephemeral range and never the same one twice in a
    /// process.
    public static func next() throws -> Int {
        for _ in 0..<10_000 {
            let port = Int.random(in: range)
            guard handedOut.withLock({ !$0.contains(port) }), isFree(port) else { continue }
            if handedOut.withLock({ $0.insert(port).inserted }) { return port }
        }
        throw HarnessError("no free port in \(range)")
    }

    /// Starts a server with `start(port)` on a port from ``next()``. Should the port be taken after
    /// all when the server binds it (it exits with "Address in use" before it listens), says on
    /// standard error what holds it and starts the server again on another port, up to `attempts`
    /// times in all.
    public static func startServer<Server>(attempts: Int = 3, _ start: (_ port: Int) throws -> Server) throws -> Server {
        var attempt = 1
        while true {
            let port = try next()
            do {
                return try start(port)
            } catch let exited as ChildProcess.ServerExited where exited.addressInUse && attempt < attempts {
                FileHandle.standardError.write(Data("[test servers] \(exited.summary); trying another port\n".utf8))
                attempt += 1
            }
        }
    }

    /// Whether 127.0.0.1:`port` can be bound now (without SO_REUSEADDR, so a port whose last
    /// connection is still in TIME_WAIT counts as taken).
    static func isFree(_ port: Int) -> Bool {
        withLoopbackSocket(port: port) { bind($0, $1, $2) == 0 }
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port` now.
    public static func canConnect(port: Int) -> Bool {
        withLoopbackSocket(port: port) { connect($0, $1, $2) == 0 }
    }

    /// `body` with a new TCP socket and the address 127.0.0.1:`port`; the socket is closed after.
    /// Under ``SpawnGuard``, so that no child is spawned while the socket is open: the child
    /// would get a copy, bound to the port. ChildProcess's children close theirs before they
    /// exec; one that kept it held the port for as long as it ran, and the server later given
    /// that port failed to bind it (a CI run lost nginx that way).
    private static func withLoopbackSocket(port: Int, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool) -> Bool {
        SpawnGuard.withLock { withLoopbackSocketUnguarded(port: port, body) }
    }

    private static func withLoopbackSocketUnguarded(port: Int, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }
}
