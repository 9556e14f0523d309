import Foundation
import Synchronization
import Threading

#if canImport(Glibc)
    import Glibc
#endif

/// A server process started by a test or a benchmark, stopped by ``terminate(timeout:)`` or when
/// released.
///
/// It runs under a small `/bin/sh` watchdog that also stops it if the process that started it
/// dies (e.g. a test run killed by a timeout), so no broker outlives the run. Spawned with
/// `posix_spawn` and reaped with `waitpid`: Foundation's `Process.waitUntilExit` can hang on
/// Linux when called from a Swift concurrency thread.
public final class ChildProcess: Sendable {
    public let pid: pid_t
    /// Where its standard output and error go.
    public let logFile: String
    /// Its exit status once it has been reaped (`waitpid`), which happens once: any thread may
    /// ask whether it runs, wait for it or stop it.
    private let exit = Mutex<Int32?>(nil)

    /// - Parameter coreDirectory: if set, the program runs there (its working directory) with
    ///   core dumps allowed, so a crash leaves `core` in it (the kernel's `core_pattern` here is
    ///   `core`, in the working directory).
    public init(
        executable: String, arguments: [String], logFile: String, environment: [String: String] = [:], coreDirectory: String? = nil
    ) throws {
        // stop: SIGTERM, up to 3 s of grace (tansu waits for open client connections), SIGKILL.
        let cores = coreDirectory == nil ? "" : #"ulimit -c unlimited 2>/dev/null; cd "$PB_CORE_DIRECTORY" || exit 1"# + "\n"
        let watchdog =
            cores + """
                "$0" "$@" & c=$!
                stop() { kill -TERM $c 2>/dev/null; i=0
                  while kill -0 $c 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done
                  kill -KILL $c 2>/dev/null; wait $c; exit 0; }
                trap stop TERM INT
                while kill -0 \(getpid()) 2>/dev/null && kill -0 $c 2>/dev/null; do sleep 0.5; done
                kill -0 $c 2>/dev/null && stop
                wait $c
                """
        let argv = ["/bin/sh", "-c", watchdog, executable] + arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        if let coreDirectory { env["PB_CORE_DIRECTORY"] = coreDirectory }
        let envp = env.map { "\($0.key)=\($0.value)" }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logFile, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else of ours: the test process's sockets and pipes are mostly not close-on-exec
        // (libcurl's, a test's bound socket), and a server holding a copy would keep a port bound
        // or a connection open after the test closed it.
        guard SpawnActions.addCloseFrom(&actions, 3) == 0 else { throw HarnessError("posix_spawn_file_actions_addclosefrom_np failed") }

        var cArgs = argv.map { strdup($0) } + [nil]
        var cEnv = envp.map { strdup($0) } + [nil]
        defer {
            for arg in cArgs { free(arg) }
            for entry in cEnv { free(entry) }
        }
        // Its own process group, so a last-resort SIGKILL reaches the server too.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        var child: pid_t = 0
        let rc = SpawnGuard.withLock { posix_spawn(&child, "/bin/sh", &actions, &attributes, &cArgs, &cEnv) }
        guard rc == 0 else { throw HarnessError("posix_spawn \(executable): \(String(cString: strerror(rc)))") }
        self.pid = child
        self.logFile = logFile
    }

    deinit {
        terminate()
    }

    /// The program's own pid (a child of the watchdog shell ``pid``), once it runs: for its
    /// /proc figures, or to signal it directly so that its own exit status comes back.
    public var programPID: pid_t? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8) else { return nil }
        // The watchdog's own `sleep 0.5` is a child too, now and then.
        return text.split(separator: " ").compactMap { pid_t($0) }.first { child in
            (try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8))?.hasPrefix("sleep\n") != true
        }
    }

    public var isRunning: Bool { exitStatus() == nil }

    /// Waits for the process to exit by itself and returns its exit status (nil on timeout).
    public func wait(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = exitStatus() { return status }
            usleep(10_000)
        }
        return nil
    }

    /// ``wait(timeout:)`` for async tests: polls with `Task.sleep`, so a long wait does not hold
    /// one of the cooperative pool's few threads (2 on the CI machine) and stall other tests.
    public func wait(timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let status = exitStatus() { return status }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }

    /// Waits until the server accepts TCP connections on 127.0.0.1:`port`. Fails at once, with
    /// the end of its log, if it exits first (a port taken after all: "Address in use").
    public func waitUntilListening(port: Int, timeout: Duration) throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if FreePort.canConnect(port: port) { return }
            if let status = exitStatus() {
                throw ServerExited(port: port, status: status, log: Self.tail(of: logFile))
            }
            usleep(20_000)
        }
        throw HarnessError("nothing listens on 127.0.0.1:\(port) after \(timeout); its log ends:\n\(Self.tail(of: logFile))")
    }

    /// A server that exited before it listened.
    public struct ServerExited: Error, CustomStringConvertible {
        public let port: Int
        public let status: Int32
        public let log: String
        /// When the port was taken: what held it as the server exited (``PortHolders``).
        public let holders: String?

        init(port: Int, status: Int32, log: String) {
            (self.port, self.status, self.log) = (port, status, log)
            let addressInUse = log.contains("Address in use") || log.contains("Address already in use")
            holders = addressInUse ? PortHolders.describe(port: port) : nil
        }

        public var addressInUse: Bool { holders != nil }
        public var summary: String {
            "the server for 127.0.0.1:\(port) exited (\(status)) before it listened" + (holders.map { "; the port was taken: \($0)" } ?? "")
        }
        public var description: String { "\(summary); its log ends:\n\(log)" }
    }

    static func tail(of file: String, bytes: Int = 2000) -> String {
        let text = (try? String(contentsOfFile: file, encoding: .utf8)) ?? "(no log at \(file))"
        return String(text.suffix(bytes))
    }

    /// The exit status if the process has exited (it is reaped then), else nil.
    private func exitStatus() -> Int32? {
        exit.withLock { exit in
            if let exit { return exit }
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == pid else { return nil }
            exit = (status >> 8) & 0xff
            return exit
        }
    }

    /// Sends `signal` to the program (``programPID``) as soon as `condition` holds, from a
    /// dedicated thread: a test task can wait seconds for a pool thread on a loaded machine,
    /// which would move the signal past the moment the test means. Gives up after `timeout`.
    public func signal(_ signal: Int32, when condition: @escaping @Sendable () -> Bool, timeout: Duration = .seconds(120)) {
        Thread.detachNewThread { [self] in
            let deadline = ContinuousClock.now + timeout
            while !condition() {
                guard ContinuousClock.now < deadline else { return }
                usleep(2_000)
            }
            if let program = programPID { kill(program, signal) }
        }
    }

    /// SIGTERM, wait up to `timeout`, then SIGKILL. Idempotent.
    public func terminate(timeout: Duration = .seconds(10)) {
        guard exitStatus() == nil else { return }
        kill(pid, SIGTERM)
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if exitStatus() != nil { return }
            usleep(10_000)
        }
        kill(-pid, SIGKILL)
        exit.withLock { exit in
            guard exit == nil else { return }
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            exit = (status >> 8) & 0xff
        }
    }
}

extension ChildProcess {
    // A command that hangs is still ended, after 3 minutes: a check that is done in a second
    // (Python with jsonschema) took over 60 s on a machine at load 17, failing 64 tests at once.

    /// ``run(_:_:timeout:environment:)`` for async tests, waiting without holding a pool thread.
    public static func run(
        _ executable: String, _ arguments: [String], timeout: Duration = .seconds(180), environment: [String: String] = [:]
    ) async throws -> (status: Int32, output: String) {
        let run = try Run(executable, arguments, environment: environment)
        return try run.finish(await run.child.wait(timeout: timeout), timeout: timeout)
    }

    /// Runs a command to completion (with `environment` over this process's) and returns its exit
    /// status and combined output.
    public static func run(
        _ executable: String, _ arguments: [String], timeout: Duration = .seconds(180), environment: [String: String] = [:]
    ) throws -> (status: Int32, output: String) {
        let run = try Run(executable, arguments, environment: environment)
        return try run.finish(run.child.wait(timeout: timeout), timeout: timeout)
    }

    /// A command run to completion, its output in a file removed at the end.
    private struct Run {
        let child: ChildProcess
        let description: String
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-run-\(UUID().uuidString).log").path

        init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
            child = try ChildProcess(executable: executable, arguments: arguments, logFile: log, environment: environment)
            description = ([executable] + arguments).joined(separator: " ")
        }

        func finish(_ status: Int32?, timeout: Duration) throws -> (status: Int32, output: String) {
            defer { try? FileManager.default.removeItem(atPath: log) }
            guard let status else {
                child.terminate()
                throw HarnessError("\(description) did not finish within \(timeout)")
            }
            return (status, (try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
        }
    }
}

/// A process or server that could not be started, reached or run to its end: a failure in the
/// set-up of a test or benchmark, not in the code under test.
public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
