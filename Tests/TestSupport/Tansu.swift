import Foundation

/// tansu, an independent Kafka-protocol broker, as a child process on a free loopback port with
/// in-memory storage (see docs/testing.md). Stopped when released.
///
/// - Important: clients need librdkafka ≥ 2.1 at run time (scripts/test.sh puts .tools/librdkafka
///   on LD_LIBRARY_PATH).
public final class Tansu: @unchecked Sendable {
    public let bootstrapServers: String
    private let process: ChildProcess
    private let directory: URL

    public init() throws {
        let port = try FreePort.next()
        let url = "tcp://127.0.0.1:\(port)"
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-tansu-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        process = try ChildProcess(
            executable: Repository.tool("bin/tansu"),
            arguments: ["broker", "--listener-url", url, "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"],
            logFile: directory.appendingPathComponent("tansu.log").path,
            environment: ["RUST_LOG": "warn"]
        )
        bootstrapServers = "127.0.0.1:\(port)"
        try FreePort.waitUntilListening(port: port, timeout: .seconds(20))
    }

    deinit {
        process.terminate()
        try? FileManager.default.removeItem(at: directory)
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
