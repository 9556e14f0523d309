import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A network namespace of its own (`ip netns add`), with only its loopback up: servers and
/// workers started inside it talk over that loopback, and its firewall (iptables) can blackhole,
/// drop or reject their connections without touching the machine's. Deleted when released.
///
/// Code runs inside it through ``perform(_:)``: a thread of its own enters the namespace, runs the
/// body and leaves again, so the sockets the body makes, the processes it spawns and the threads
/// it starts are the namespace's, and nothing else of the process is. Only synchronous code: a
/// Swift task or a dispatch job started in there could start one of the process's shared
/// threads inside the namespace, where every later socket of that thread would be lost.
///
/// Needs root (CAP_SYS_ADMIN) and iproute2; iptables for ``iptables(_:)``.
public final class NetworkNamespace: Sendable {
    public let name: String

    private static let made = Atomic<Int>(0)

    /// Makes a namespace named `prefix-PID-N` and brings its loopback up.
    public init(prefix: String = "pb") throws {
        name = "\(prefix)-\(getpid())-\(Self.made.add(1, ordering: .relaxed).newValue)"
        try Self.ip(["netns", "add", name])
        do {
            try Self.ip(["-n", name, "link", "set", "lo", "up"])
        } catch {
            _ = try? Self.ip(["netns", "delete", name])
            throw error
        }
    }

    deinit {
        _ = try? Self.ip(["netns", "delete", name])
    }

    /// Whether namespaces can be made and firewalled here: root, `ip` and `iptables` present.
    public static var isAvailable: Bool {
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip")
            && FileManager.default.isExecutableFile(atPath: "/usr/sbin/iptables")
    }

    /// Runs `body` inside the namespace, on a thread of its own, and returns what it returns.
    ///
    /// - Important: `body` must be synchronous through and through: no task, no dispatch job.
    ///   Threads and processes it starts stay in the namespace for their lifetime.
    public func perform<T>(_ body: @escaping () throws -> T) throws -> T {
        let path = "/var/run/netns/\(name)"
        let target = open(path, O_RDONLY | O_CLOEXEC)
        guard target >= 0 else { throw HarnessError("open \(path): errno \(errno)") }
        defer { close(target) }
        let home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)
        guard home >= 0 else { throw HarnessError("open /proc/thread-self/ns/net: errno \(errno)") }
        defer { close(home) }
        return try Self.onOwnThread {
            guard Self.setns(target, Self.cloneNewNet) == 0 else { throw HarnessError("setns into \(path): errno \(errno)") }
            // Back home before the thread reports: whatever it wakes runs outside.
            defer { precondition(Self.setns(home, Self.cloneNewNet) == 0, "setns back to this process's namespace failed: errno \(errno)") }
            return try body()
        }
    }

    /// ``perform(_:)`` for async callers, without holding a cooperative thread while it runs.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await offPool { try self.perform(body) }
    }

    /// Runs `iptables ARGUMENTS` inside the namespace: e.g. `["-A", "INPUT", "-p", "tcp",
    /// "--dport", "8443", "-j", "DROP"]`.
    public func iptables(_ arguments: [String]) throws {
        let (status, output) = try ChildProcess.run("/usr/sbin/ip", ["netns", "exec", name, "iptables", "-w"] + arguments)
        guard status == 0 else { throw HarnessError("iptables \(arguments.joined(separator: " ")) in \(name): \(output)") }
    }

    /// The TCP connections in the namespace now, from its `/proc/net/tcp` and `tcp6`.
    public func connections() throws -> [TCPSocket] {
        try perform { try TCPSocket.all() }
    }

    /// glibc's `setns(2)` and `CLONE_NEWNET`, which Swift's Glibc module does not declare: they
    /// need `_GNU_SOURCE`.
    private static let setns: @convention(c) (Int32, Int32) -> Int32 = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "setns") else { fatalError("glibc without setns") }
        return unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    }()
    private static let cloneNewNet: Int32 = 0x4000_0000

    private static func ip(_ arguments: [String]) throws {
        let (status, output) = try ChildProcess.run("/usr/sbin/ip", arguments)
        guard status == 0 else { throw HarnessError("ip \(arguments.joined(separator: " ")): \(output)") }
    }

    /// Runs `body` on a new thread and waits for it: a thread that entered another namespace must
    /// not be one the caller goes on using.
    private static func onOwnThread<T>(_ body: @escaping () throws -> T) throws -> T {
        let box = UnsafeSendable(body)
        let result = Mutex<UnsafeSendable<Result<T, any Error>>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let outcome = Result { try box.value() }
            result.withLock { $0 = UnsafeSendable(outcome) }
            done.signal()
        }
        done.wait()
        return try result.withLock { $0! }.value.get()
    }
}

/// One TCP socket as the kernel lists it in `/proc/net/tcp`.
public struct TCPSocket: Sendable, Equatable {
    public var localPort: Int
    public var remotePort: Int
    /// The kernel's state number: 0x01 established, 0x0A listening.
    public var state: Int
    /// The socket's inode, as `/proc/PID/fd` links name it (`socket:[INODE]`).
    public var inode: UInt64

    public var isEstablished: Bool { state == 0x01 }
    public var isListening: Bool { state == 0x0A }

    /// Every TCP socket (IPv4 and IPv6) of the calling thread's network namespace.
    public static func all() throws -> [TCPSocket] {
        let v4 = try read("/proc/thread-self/net/tcp")
        let v6 = (try? read("/proc/thread-self/net/tcp6")) ?? ""  // none without IPv6
        return [v4, v6].flatMap { $0.split(separator: "\n").dropFirst().compactMap(parse) }
    }

    /// A `/proc/net` table in one `read(2)`: read in pieces while connections come and go, the
    /// kernel resumes each piece by position and skips sockets (a test's established connections
    /// went missing that way).
    private static func read(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HarnessError("open \(path): errno \(errno)") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 1 << 22)
        var length = 0
        while true {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + length, $0.count - length) }
            guard n > 0 else { break }
            length += n
            if length == bytes.count { bytes += [UInt8](repeating: 0, count: bytes.count) }
        }
        return String(decoding: bytes[..<length], as: UTF8.self)
    }

    /// A line of `/proc/net/tcp`: `sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …`,
    /// addresses as `HEXIP:HEXPORT`.
    static func parse(_ line: Substring) -> TCPSocket? {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 10,
            let local = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
            let remote = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
            let state = Int(fields[3], radix: 16), let inode = UInt64(fields[9])
        else { return nil }
        return TCPSocket(localPort: local, remotePort: remote, state: state, inode: inode)
    }

    /// The inodes of the sockets process `pid` holds open.
    public static func inodes(ofProcess pid: pid_t) -> Set<UInt64> {
        let directory = "/proc/\(pid)/fd"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var inodes: Set<UInt64> = []
        for entry in entries {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(entry)"),
                target.hasPrefix("socket:["), target.hasSuffix("]")
            else { continue }
            if let inode = UInt64(target.dropFirst(8).dropLast()) { inodes.insert(inode) }
        }
        return inodes
    }
}

/// A value handed to another thread that the caller waits for: it is never used by two at once.
private struct UnsafeSendable<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}
