import Foundation
import ProcessHarness
import Synchronization

/// A Confluent-compatible Schema Registry for tests: the emulator `Resources/schema_registry.py`
/// (standard-library Python, written from Confluent's API reference; docs/testing.md lists what
/// it does and its known differences) as a child process on a free loopback port. No Schema
/// Registry server can be installed here: Confluent's is Java from Confluent's own repository.
///
/// Optionally HTTPS with a test CA's certificate and HTTP Basic credentials on every registry
/// endpoint. Its schemas and IDs live in a state file, so ``restart()`` keeps them. Tests steer
/// it with ``injectFaults(status:count:pathPrefix:)`` and ``setDelay(_:)`` and read what was
/// asked of it with ``requests()``. Stopped when released. Start it with
/// ``start(tls:user:password:)`` from async tests.
public final class SchemaRegistryServer: Sendable {
    /// HTTP Basic credentials.
    public struct Credentials: Sendable, Hashable {
        public var user: String
        public var password: String
        public init(user: String, password: String) { (self.user, self.password) = (user, password) }
    }

    public let port: Int
    /// `http://127.0.0.1:PORT`, or `https://` with TLS.
    public let url: String
    /// The CA that signed its certificate, with TLS.
    public let caFile: String?
    /// The credentials it asks for, if any.
    public let credentials: Credentials?
    /// Its state file and log.
    public let directory: URL
    private let tls: TestCertificates?
    private let process: Mutex<ChildProcess?>

    static var resources: String { Repository.root + "/Tests/TestSupport/Resources" }
    static let python = "/usr/bin/python3"

    /// Starts an emulator off the cooperative pool (``offPool(_:)``).
    /// - Parameters:
    ///   - tls: serve HTTPS with this CA's server certificate (for 127.0.0.1 and localhost).
    ///   - user: with `password`: every registry request must carry these Basic credentials
    ///     (401 with Confluent's body and a `WWW-Authenticate` challenge otherwise).
    public static func start(tls: TestCertificates? = nil, user: String? = nil, password: String? = nil) async throws -> SchemaRegistryServer {
        try await offPool { try SchemaRegistryServer(tls: tls, user: user, password: password) }
    }

    public init(tls: TestCertificates? = nil, user: String? = nil, password: String? = nil) throws {
        guard (user == nil) == (password == nil) else { throw TestSupportError("a user needs a password, and a password a user") }
        self.tls = tls
        caFile = tls?.caFile
        credentials = user.map { Credentials(user: $0, password: password ?? "") }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-schema-registry-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (port, child) = try FreePort.startServer { [directory, tls, credentials] port in
            (port, try Self.launch(port: port, tls: tls, credentials: credentials, directory: directory))
        }
        self.port = port
        url = "\(tls == nil ? "http" : "https")://127.0.0.1:\(port)"
        process = Mutex(child)
    }

    deinit {
        process.withLock { $0?.terminate() }
        try? FileManager.default.removeItem(at: directory)
    }

    private static func launch(port: Int, tls: TestCertificates?, credentials: Credentials?, directory: URL) throws -> ChildProcess {
        var arguments = ["-B", resources + "/schema_registry.py", "--port", String(port)]
        arguments += ["--state-file", directory.appendingPathComponent("state.json").path]
        if let tls { arguments += ["--tls-cert", tls.certificateFile, "--tls-key", tls.keyFile] }
        if let credentials { arguments += ["--user", credentials.user, "--password", credentials.password] }
        let child = try ChildProcess(
            executable: python, arguments: arguments, logFile: directory.appendingPathComponent("registry-\(port).log").path)
        try child.waitUntilListening(port: port, timeout: .seconds(20))
        return child
    }

    /// Stops it, as a crash would: connections are cut and nothing listens on its port.
    public func stop() async {
        let old = process.withLock { p -> ChildProcess? in
            defer { p = nil }
            return p
        }
        if let old { _ = try? await offPool { old.terminate() } }
    }

    /// Stops it and starts it again on the same port with the same state file: the schemas, IDs
    /// and versions stay; faults, the delay and the request log start empty.
    public func restart() async throws {
        await stop()
        let child = try await offPool { [port, tls, credentials, directory] in
            try Self.launch(port: port, tls: tls, credentials: credentials, directory: directory)
        }
        process.withLock { $0 = child }
    }

    /// The next `count` registry requests whose path starts with `pathPrefix` get `status`, with
    /// an error body (`error_code` 50001 for 500, else the status).
    public func injectFaults(status: Int, count: Int, pathPrefix: String = "") async throws {
        let spec = try jsonText(["status": status, "count": count, "path_prefix": pathPrefix])
        try await control("POST", "/_emulator/faults", body: spec)
    }

    /// Drops the faults not yet served: an outage that ends when the test says so.
    public func clearFaults() async throws {
        try await control("POST", "/_emulator/faults", body: try jsonText(["clear": true]))
    }

    /// Every later answer waits `delay` first (zero: none).
    public func setDelay(_ delay: Duration) async throws {
        let milliseconds = delay.components.seconds * 1000 + delay.components.attoseconds / 1_000_000_000_000_000
        try await control("POST", "/_emulator/faults", body: try jsonText(["delay_ms": milliseconds]))
    }

    /// `METHOD /path?query` of every registry request served since the start (or the last
    /// ``clearRequests()``), in order; faulted and refused ones included.
    public func requests() async throws -> [String] {
        try await requestLog().map { "\($0.method) \($0.target)" }
    }

    /// A request the emulator served: its answer's status and the body it was sent.
    public struct LoggedRequest: Sendable, Decodable {
        public var method: String
        public var target: String
        public var status: Int
        public var body: String
    }

    public func requestLog() async throws -> [LoggedRequest] {
        let response = try await control("GET", "/_emulator/requests")
        return try JSONDecoder().decode([LoggedRequest].self, from: Data(response.body.utf8))
    }

    public func clearRequests() async throws {
        try await control("DELETE", "/_emulator/requests")
    }

    @discardableResult
    private func control(_ method: String, _ path: String, body: String? = nil) async throws -> Response {
        let response = try await request(method, path, body: body, auth: .none)
        guard response.status == 200 else { throw TestSupportError("\(method) \(path): \(response.status) \(response.body)") }
        return response
    }

    private func jsonText(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }
}
