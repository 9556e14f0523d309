import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Loopback ports for test servers.
public enum FreePort {
    /// Ports handed out in this process: bind-to-0 may give a released port again at once, and
    /// two servers started in parallel would then share it (the second one's nginx exits, and
    /// its test talks to the first one's).
    private static let handedOut = Mutex<Set<Int>>([])

    /// A port that was free a moment ago (bound to 127.0.0.1:0 and released), never the same
    /// one twice in a process.
    public static func next() throws -> Int {
        while true {
            let port = try unused()
            if handedOut.withLock({ $0.insert(port).inserted }) { return port }
        }
    }

    private static func unused() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestSupportError("socket() failed") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { ptr in
                bind(fd, ptr, len) == 0 && getsockname(fd, ptr, &len) == 0
            }
        }
        guard bound else { throw TestSupportError("bind() failed") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Waits until something accepts TCP connections on 127.0.0.1:`port`.
    public static func waitUntilListening(port: Int, timeout: Duration) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if canConnect(port: port) { return }
            usleep(20_000)
        }
        throw TestSupportError("nothing listens on 127.0.0.1:\(port) after \(timeout)")
    }

    public static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
