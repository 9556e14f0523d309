import Foundation
import ProcessHarness

#if canImport(Glibc)
    import Glibc
#endif

/// A TCP relay to a server whose open connections can be made to go silent
/// (`Resources/silent_relay.py`): nothing more passes either way and nothing closes, while new
/// connections are relayed as before. What a client sees when its path dies behind a hop that
/// stays up, with no root and no network namespace needed. Stopped when released.
public final class SilentRelay: Sendable {
    public let port: Int
    private let process: ChildProcess

    /// Starts a relay to 127.0.0.1:`upstreamPort` off the cooperative pool.
    public static func start(to upstreamPort: Int) async throws -> SilentRelay {
        try await offPool { try SilentRelay(to: upstreamPort) }
    }

    public init(to upstreamPort: Int) throws {
        let script = Repository.root + "/Tests/TestSupport/Resources/silent_relay.py"
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-relay-\(UUID().uuidString).log").path
        (port, process) = try FreePort.startServer { port in
            let child = try ChildProcess(
                executable: "/usr/bin/env", arguments: ["python3", script, "--listen", String(port), "--upstream", "127.0.0.1:\(upstreamPort)"],
                logFile: log)
            try child.waitUntilListening(port: port, timeout: .seconds(20))
            return (port, child)
        }
    }

    deinit {
        process.terminate()
        try? FileManager.default.removeItem(atPath: process.logFile)
    }

    /// Every connection open now goes silent; returns once the relay says so.
    public func silence() async throws {
        let before = silencedCount
        guard let program = process.programPID else { throw TestSupportError("the relay is not running") }
        kill(program, SIGUSR1)
        let deadline = ContinuousClock.now + .seconds(10)
        while silencedCount == before {
            guard ContinuousClock.now < deadline else {
                let children = (try? String(contentsOfFile: "/proc/\(process.pid)/task/\(process.pid)/children", encoding: .utf8)) ?? "?"
                throw TestSupportError(
                    "the relay did not silence its connections (pid \(program), children \(children)): \((try? String(contentsOfFile: process.logFile, encoding: .utf8)) ?? "")"
                )
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    private var silencedCount: Int {
        ((try? String(contentsOfFile: process.logFile, encoding: .utf8)) ?? "").split(separator: "\n").count { $0.hasPrefix("silenced") }
    }
}
