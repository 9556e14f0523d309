import Foundation
import ProcessHarness

/// A real nginx serving HTTP/2 over TLS on a free loopback port, with a CA made at test time.
/// Stopped when released. Configuration: `Resources/nginx-h2.conf.template`. Start it with
/// ``start()`` from async tests.
public final class NginxServer: @unchecked Sendable {
    // Immutable after init; `process` is only terminated from deinit or stop().
    public let port: Int
    public let directory: URL
    public let certificates: TestCertificates
    private let process: ChildProcess

    public var baseURL: String { "https://127.0.0.1:\(port)" }
    public var caFile: String { certificates.caFile }
    public var accessLog: String { directory.appendingPathComponent("access.log").path }

    /// Starts a server off the cooperative pool (``offPool(_:)``).
    /// - Parameter keepaliveRequests: requests a connection serves before nginx says GOAWAY
    ///   (nil: ten million, never in a test).
    public static func start(keepaliveRequests: Int? = nil) async throws -> NginxServer {
        try await offPool { try NginxServer(keepaliveRequests: keepaliveRequests) }
    }

    public init(keepaliveRequests: Int? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        certificates = try TestCertificates.shared.copy(to: directory)
        let template = try String(contentsOfFile: Self.templatePath, encoding: .utf8)
        (port, process) = try FreePort.startServer { [directory] port in
            let config = template.replacingOccurrences(of: "{{DIR}}", with: directory.path)
                .replacingOccurrences(of: "{{PORT}}", with: String(port))
                .replacingOccurrences(of: "keepalive_requests 10000000;", with: "keepalive_requests \(keepaliveRequests ?? 10_000_000);")
            let configFile = directory.appendingPathComponent("nginx.conf")
            try config.write(to: configFile, atomically: true, encoding: .utf8)
            let process = try ChildProcess(
                executable: "/usr/sbin/nginx", arguments: ["-p", directory.path, "-c", configFile.path],
                logFile: directory.appendingPathComponent("stdout-\(port).log").path)
            try process.waitUntilListening(port: port, timeout: .seconds(20))
            return (port, process)
        }
    }

    deinit {
        process.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    /// SIGKILLs the worker processes: every open connection drops at once, mid-flight. The
    /// master starts a new worker, so new connections succeed.
    public func killWorkers() throws {
        let master = try String(contentsOf: directory.appendingPathComponent("nginx.pid"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let result = try ChildProcess.run("/usr/bin/pkill", ["-KILL", "-P", master])
        guard result.status == 0 else { throw TestSupportError("pkill -P \(master): \(result.output)") }
    }

    /// The access log's lines (written when a request completes).
    public func accessLogLines() throws -> [Substring] {
        try String(contentsOfFile: accessLog, encoding: .utf8).split(separator: "\n")
    }

    /// When each logged request to `uri` arrived, in seconds (nginx's clock, millisecond
    /// resolution), in order: its end less the time since its first byte.
    public func arrivals(uri: String) throws -> [Double] {
        try accessLogLines().compactMap { line -> Double? in
            let f = line.split(separator: " ")
            guard f.count == 9, f[4] == uri, let end = Double(f[6]), let took = Double(f[7]) else { return nil }
            return end - took
        }.sorted()
    }

    static var templatePath: String { Repository.root + "/Tests/TestSupport/Resources/nginx-h2.conf.template" }
}
