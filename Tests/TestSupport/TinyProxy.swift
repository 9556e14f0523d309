import Foundation
import ProcessHarness

#if canImport(Glibc)
    import Glibc
#endif

/// A real HTTP proxy, Debian's tinyproxy (`tinyproxy-bin`, scripts/setup.sh), on a loopback port
/// with a config file written at test time: it tunnels `CONNECT` to the ports it is given only
/// (as an egress proxy allows 443 only), optionally asks for Basic credentials, and logs every
/// request to a file the test reads. Stopped when released. Start it with ``start(allowing:credentials:port:)``
/// from async tests.
public final class TinyProxy: @unchecked Sendable {
    // Immutable after init; `process` is only terminated from deinit or stop().
    public let port: Int
    public let directory: URL
    private let process: ChildProcess

    public static let executable = "/usr/bin/tinyproxy"

    /// `http://127.0.0.1:PORT`, without credentials.
    public var url: String { "http://127.0.0.1:\(port)" }
    public var logFile: String { directory.appendingPathComponent("tinyproxy.log").path }

    /// Starts a proxy off the cooperative pool (``offPool(_:)``).
    /// - Parameters:
    ///   - connectPorts: the ports `CONNECT` may reach; any other is refused with 403.
    ///   - credentials: Basic credentials it requires (tinyproxy takes letters, digits and
    ///     `-._` only); nil: none. Without them it answers 407.
    ///   - port: the port to listen on; nil: a free one.
    public static func start(
        allowing connectPorts: [Int], credentials: (user: String, password: String)? = nil, port: Int? = nil
    )
        async throws -> TinyProxy
    {
        try await offPool { try TinyProxy(allowing: connectPorts, credentials: credentials, port: port) }
    }

    public init(allowing connectPorts: [Int], credentials: (user: String, password: String)? = nil, port fixedPort: Int? = nil) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw TestSupportError("\(Self.executable) is missing: run scripts/setup.sh (apt: tinyproxy-bin)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-tinyproxy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let start = { [directory] (port: Int) throws -> (Int, ChildProcess) in
            // tinyproxy(8)'s config: no ConnectPort line would allow every port, so there is at least one.
            var lines = [
                "Port \(port)", "Listen 127.0.0.1", "Allow 127.0.0.1", "Timeout 60", "MaxClients 100",
                "LogFile \"\(directory.appendingPathComponent("tinyproxy.log").path)\"", "LogLevel Connect",
            ]
            lines += connectPorts.map { "ConnectPort \($0)" }
            if let credentials { lines.append("BasicAuth \(credentials.user) \(credentials.password)") }
            let configFile = directory.appendingPathComponent("tinyproxy-\(port).conf")
            try (lines.joined(separator: "\n") + "\n").write(to: configFile, atomically: true, encoding: .utf8)
            // -d: in the foreground, so that it is our child and stops with us.
            let process = try ChildProcess(
                executable: Self.executable, arguments: ["-d", "-c", configFile.path],
                logFile: directory.appendingPathComponent("stdout-\(port).log").path)
            try process.waitUntilListening(port: port, timeout: .seconds(20))
            return (port, process)
        }
        (port, process) = try fixedPort.map(start) ?? FreePort.startServer(start)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Stops the proxy now, as a crash would: what was tunnelled through it is cut, and
    /// connecting to it fails. SIGKILL: run under the test process, tinyproxy 1.11 has SIGTERM
    /// blocked (its /proc status says so) and would take the watchdog's 3 s grace every time.
    public func stop() {
        if let pid = process.programPID { kill(pid, SIGKILL) }
        process.terminate()
    }

    /// The `host:port` of every `CONNECT` it was asked for, in order (refused ones included):
    /// its log's `Request (file descriptor N): CONNECT host:port HTTP/1.1` lines, written as a
    /// request arrives, before it is tunnelled.
    public func connectRequests() throws -> [String] {
        let log = (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? ""
        return log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "): CONNECT ") else { return nil }
            return line[range.upperBound...].split(separator: " ").first.map(String.init)
        }
    }

    /// The log, for failure messages.
    public func log() -> String {
        (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "(no log)"
    }
}
