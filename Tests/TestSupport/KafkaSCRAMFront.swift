import Foundation
import ProcessHarness

/// SASL/SCRAM in front of a Kafka-protocol broker: `Resources/kafka_scram_front.py`
/// (standard-library Python, written from KIP-43, KIP-84, KIP-152, RFC 5802/7677 and Kafka's
/// protocol guide) on a loopback port, as a child process. Each connection must log in with
/// SCRAM-SHA-256 or SCRAM-SHA-512 as one of `users`, as against a Kafka broker's SASL listener;
/// then its bytes go unchanged to `upstream`. tansu 0.6.0 cannot log anyone in itself (its storage
/// keeps no SCRAM credentials; docs/testing.md), so ``Tansu`` puts this in front, behind
/// ``KafkaTLSFront`` for SASL_SSL. Its log (one line per login) is `log` in `directory`. Stopped
/// when released.
public final class KafkaSCRAMFront: Sendable {
    public let port: Int
    public let directory: URL
    private let process: ChildProcess

    /// Starts the front on 127.0.0.1:`port`, passing logged-in connections to `upstream`
    /// (`host:port`), and waits until it listens. `users`: name → password.
    public init(port: Int, upstream: String, users: [String: String], directory: URL) throws {
        self.port = port
        self.directory = directory
        let arguments =
            ["-B", Self.scriptPath, "--listen", "127.0.0.1:\(port)", "--upstream", upstream]
            + users.sorted { $0.key < $1.key }.flatMap { ["--user", "\($0.key):\($0.value)"] }
        process = try ChildProcess(
            executable: "/usr/bin/python3", arguments: arguments, logFile: directory.appendingPathComponent("scram-front-\(port).log").path)
        try process.waitUntilListening(port: port, timeout: .seconds(20))
    }

    /// Its log: `kafka_scram_front: listening on …`, then one line per login or refusal.
    public var log: String { (try? String(contentsOfFile: process.logFile, encoding: .utf8)) ?? "" }

    /// Stops the front (idempotent): new connections are refused, open ones are cut.
    public func stop() {
        process.terminate()
    }

    deinit {
        process.terminate()
    }

    static var scriptPath: String { Repository.root + "/Tests/TestSupport/Resources/kafka_scram_front.py" }
}
