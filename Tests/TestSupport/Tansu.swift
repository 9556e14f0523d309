import Foundation
import ProcessHarness
import Synchronization

/// tansu, an independent Kafka-protocol broker, as a child process on a free loopback port (see
/// docs/testing.md). In-memory storage by default; with ``Storage/s3(endpoint:bucket:)`` its
/// data and committed offsets survive ``restart(hard:downtime:)``. Stopped when released.
///
/// - Important: clients need librdkafka ≥ 2.1 at run time (scripts/test.sh puts .tools/librdkafka
///   on LD_LIBRARY_PATH).
public final class Tansu: Sendable {
    public enum Storage: Sendable {
        case memory
        /// An S3 server such as ``S3Server``: durable across broker restarts.
        case s3(endpoint: String, bucket: String)
    }

    public let bootstrapServers: String
    private let port: Int
    private let storage: Storage
    private let directory: URL
    private let process: Mutex<ChildProcess?>

    /// Starts a broker off the cooperative pool (``offPool(_:)``).
    public static func start(storage: Storage = .memory) async throws -> Tansu {
        try await offPool { try Tansu(storage: storage) }
    }

    /// Starts a broker on a free port. Should the port be taken after all before tansu binds it
    /// (tansu exits with "Address in use"), starts it on another one.
    public init(storage: Storage = .memory) throws {
        self.storage = storage
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-tansu-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (port, child) = try FreePort.startServer { [directory] port in
            (port, try Self.launch(port: port, storage: storage, directory: directory))
        }
        (self.port, bootstrapServers) = (port, "127.0.0.1:\(port)")
        process = Mutex(child)
    }

    deinit {
        process.withLock { $0?.terminate() }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts tansu on 127.0.0.1:`port`, its log in `directory`, and waits until it listens.
    private static func launch(port: Int, storage: Storage, directory: URL) throws -> ChildProcess {
        let url = "tcp://127.0.0.1:\(port)"
        var environment = ["RUST_LOG": "warn"]
        let engine: String
        switch storage {
        case .memory:
            engine = "memory://tansu/"
        case .s3(let endpoint, let bucket):
            engine = "s3://\(bucket)/"
            environment["AWS_ENDPOINT"] = endpoint
            environment["AWS_ALLOW_HTTP"] = "true"
            environment["AWS_ACCESS_KEY_ID"] = "test"
            environment["AWS_SECRET_ACCESS_KEY"] = "test"
            environment["AWS_DEFAULT_REGION"] = "us-east-1"
        }
        let child = try ChildProcess(
            executable: Repository.tool("bin/tansu"),
            arguments: ["broker", "--listener-url", url, "--advertised-listener-url", url, "--storage-engine", engine],
            logFile: directory.appendingPathComponent("tansu-\(port).log").path,
            environment: environment
        )
        try child.waitUntilListening(port: port, timeout: .seconds(20))
        return child
    }

    /// Stops the broker (`kill -9` when `hard`, else SIGTERM), waits `downtime`, and starts it
    /// again on the same port with the same storage.
    public func restart(hard: Bool = true, downtime: Duration = .zero) async throws {
        let old = process.withLock { p -> ChildProcess? in
            defer { p = nil }
            return p
        }
        if let old {
            if hard, let program = old.programPID { kill(program, SIGKILL) }
            try await offPool { old.terminate() }
        }
        try await Task.sleep(for: downtime)
        let child = try await offPool { [port, storage, directory] in
            try Self.launch(port: port, storage: storage, directory: directory)
        }
        process.withLock { $0 = child }
    }

    /// ``createTopic(_:partitions:)`` off the cooperative pool (``offPool(_:)``).
    public func createTopic(_ name: String, partitions: Int32) async throws {
        try await offPool { try self.createTopic(name, partitions: partitions) }
    }

    /// Creates a topic with tansu's CLI (CreateTopics).
    public func createTopic(_ name: String, partitions: Int32) throws {
        let p = try ChildProcess(
            executable: Repository.tool("bin/tansu"),
            arguments: ["topic", "create", "--broker", "tcp://\(bootstrapServers)", "--partitions", String(partitions), name],
            logFile: "/dev/null"
        )
        let status = p.wait(timeout: .seconds(30))
        guard status == 0 else { throw TestSupportError("tansu topic create \(name) exited \(status.map(String.init) ?? "late")") }
    }
}
