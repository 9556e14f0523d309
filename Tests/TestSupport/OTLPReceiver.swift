import Foundation
import ProcessHarness

/// An OpenTelemetry trace receiver (Resources/otlp_receiver.py) as a child process on a free
/// loopback port: it checks each OTLP/HTTP JSON request against OpenTelemetry's Protobuf
/// definitions (opentelemetry-proto from PyPI, installed by scripts/setup.sh into .tools/otlp)
/// and keeps the spans it got, each as a JSON object.
public final class OTLPReceiver: Sendable {
    public let endpoint: String
    private let output: String
    private let process: ChildProcess

    public static func start() async throws -> OTLPReceiver {
        try await offPool { try OTLPReceiver() }
    }

    public init() throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-otlp-\(UUID().uuidString).jsonl").path
        let (port, process) = try FreePort.startServer { port in
            let process = try ChildProcess(
                executable: "/usr/bin/python3", arguments: [Repository.root + "/Tests/TestSupport/Resources/otlp_receiver.py", String(port), output],
                logFile: output + ".log", environment: ["PYTHONPATH": Repository.tool("otlp")])
            try process.waitUntilListening(port: port, timeout: .seconds(30))
            return (port, process)
        }
        self.process = process
        self.output = output
        endpoint = "http://127.0.0.1:\(port)"
    }

    /// Every span received so far (and `{"invalid": reason}` for each request it refused).
    public var spans: [[String: Any]] {
        guard let text = try? String(contentsOfFile: output, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    deinit {
        process.terminate()
        try? FileManager.default.removeItem(atPath: output)
    }
}
