import Foundation
import ProcessHarness

/// A local S3 server (moto, from PyPI, installed by scripts/setup.sh into .tools/moto) as a child
/// process on a free loopback port, with one bucket: durable storage for tansu's `s3://` engine.
public final class S3Server: Sendable {
    public let endpoint: String
    public let bucket: String
    private let process: ChildProcess

    /// Starts a server off the cooperative pool (``offPool(_:)``).
    public static func start(bucket: String = "tansu") async throws -> S3Server {
        try await offPool { try S3Server(bucket: bucket) }
    }

    public init(bucket: String = "tansu") throws {
        let (port, process) = try FreePort.startServer { port in
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-s3-\(port).log").path
            let process = try ChildProcess(
                executable: "/usr/bin/python3", arguments: ["-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)],
                logFile: log, environment: ["PYTHONPATH": Repository.tool("moto")])
            try process.waitUntilListening(port: port, timeout: .seconds(30))
            return (port, process)
        }
        self.process = process
        endpoint = "http://127.0.0.1:\(port)"
        self.bucket = bucket
        let create = "import urllib.request as r; r.urlopen(r.Request('\(endpoint)/\(bucket)', method='PUT'), timeout=10)"
        let (status, output) = try ChildProcess.run("/usr/bin/python3", ["-c", create], timeout: .seconds(30))
        guard status == 0 else { throw TestSupportError("cannot create bucket \(bucket) on \(endpoint): \(output)") }
    }

    deinit {
        process.terminate()
    }
}
