import Foundation

/// `pushbridge run` as a child process, observed the way an operator would: its `/metrics`,
/// `/healthz` and `/readyz`, its log, and /proc. Used by the end-to-end tests and benchmark.
public struct WorkerProcess: Sendable {
    public let process: ChildProcess
    /// Where its HTTP endpoint listens (`http.listen` in its config).
    public let port: Int
    public let log: String
    /// Where it runs, and leaves a `core` if it crashes (``terminateFailure(timeout:)`` reads it).
    public let coreDirectory: String
    public let executable: String

    /// Starts `pushbridge run --config config` (with `environment` over this process's) and
    /// waits until its HTTP endpoint listens.
    public static func start(
        executable: String, config: String, port: Int, log: String, environment: [String: String] = [:]
    ) throws
        -> WorkerProcess
    {
        // It runs in a directory of its own (for a core): its config's paths are relative to the
        // config file, and the two paths given here are made absolute.
        let cores = log + ".cores"
        try FileManager.default.createDirectory(atPath: cores, withIntermediateDirectories: true)
        let executable = URL(fileURLWithPath: executable).standardizedFileURL.path
        let config = URL(fileURLWithPath: config).standardizedFileURL.path
        let process = try ChildProcess(
            executable: executable, arguments: ["run", "--config", config], logFile: log, environment: environment, coreDirectory: cores)
        let worker = WorkerProcess(process: process, port: port, log: log, coreDirectory: cores, executable: executable)
        try process.waitUntilListening(port: port, timeout: .seconds(30))
        return worker
    }

    /// ``start(executable:config:port:log:environment:)`` for async tests, off the cooperative
    /// pool (``offPool(_:)``): a worker takes seconds to start on a loaded machine.
    public static func start(
        executable: String, config: String, port: Int, log: String, environment: [String: String] = [:]
    ) async throws
        -> WorkerProcess
    {
        try await offPool { try start(executable: executable, config: config, port: port, log: log, environment: environment) }
    }

    public var output: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    public func get(_ path: String) throws -> (status: Int, body: String) {
        try HTTPGet.get(port: port, path: path)
    }

    /// The sum of the Prometheus samples of `series`: a metric name (all its label sets), or a
    /// name with some labels, such as `pushbridge_sends_total{result="ok"}` (every series that
    /// has those labels, whatever its others).
    public func metric(_ series: String) throws -> Double {
        Self.sum(series, in: try get("/metrics").body)
    }

    public static func sum(_ series: String, in exposition: String) -> Double {
        let (name, wanted) = parse(series[...])
        var total = 0.0
        for line in exposition.split(separator: "\n") where line.hasPrefix(name) && !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            let (lineName, labels) = parse(line[..<space])
            guard lineName == name, wanted.allSatisfy({ labels.contains($0) }) else { continue }
            total += Double(line[line.index(after: space)...]) ?? 0
        }
        return total
    }

    /// A series' name and its labels as `key="value"` texts (values without commas or braces,
    /// as pushbridge's are).
    private static func parse(_ series: Substring) -> (name: Substring, labels: [Substring]) {
        guard let open = series.firstIndex(of: "{"), series.hasSuffix("}") else { return (series, []) }
        let labels = series[series.index(after: open)..<series.index(before: series.endIndex)].split(separator: ",")
        return (series[..<open], labels)
    }

    /// Cumulative buckets (upper bound in seconds, count) of a histogram, ascending.
    public func histogram(_ name: String) -> [(le: Double, count: Double)] {
        guard let body = try? get("/metrics").body else { return [] }
        var buckets: [(le: Double, count: Double)] = []
        for line in body.split(separator: "\n") where line.hasPrefix(name + "_bucket{") {
            guard let leStart = line.range(of: "le=\""), let leEnd = line[leStart.upperBound...].firstIndex(of: "\""),
                let count = line.split(separator: " ").last.flatMap({ Double($0) })
            else { continue }
            let le = String(line[leStart.upperBound..<leEnd])
            buckets.append((le == "+Inf" ? .infinity : Double(le) ?? .infinity, count))
        }
        return buckets.sorted { $0.le < $1.le }
    }

    /// User + system CPU seconds of the worker itself so far.
    public func cpuSeconds() -> Double {
        procCPUSeconds(pid: procPID)
    }

    /// CPU seconds of the worker's threads so far, by thread name (``procThreadCPUSeconds(pid:)``).
    public func threadCPUSeconds() -> [String: Double] {
        procThreadCPUSeconds(pid: procPID)
    }

    /// The worker's peak resident memory (VmHWM).
    public func peakRSSMegabytes() -> Double { statusMegabytes("VmHWM:") }

    /// Its resident memory now, in MB.
    public func rssMegabytes() -> Double { statusMegabytes("VmRSS:") }

    /// Its anonymous resident memory now (RssAnon), in MB: the heap, stacks and written data,
    /// without the pages of the executable and libraries it maps (shared with other processes,
    /// and given back by the kernel under pressure), which VmRSS counts too.
    public func anonymousRSSMegabytes() -> Double { statusMegabytes("RssAnon:") }

    /// Its threads now.
    public func threadCount() -> Double { procStatusNumber("Threads:", pid: procPID) ?? 0 }

    private func statusMegabytes(_ field: String) -> Double {
        procStatusMegabytes(field, pid: procPID)
    }

    /// The worker's process ID under /proc: the program's, not a wrapper's.
    private var procPID: String { String(process.programPID ?? process.pid) }

    /// `kill -9` of the worker itself: no drain, no commit, no leaving the group. Returns once
    /// it is gone.
    public func kill9() async {
        guard let worker = process.programPID else { return }
        kill(worker, SIGKILL)
        _ = await process.wait(timeout: .seconds(30))
    }

    /// SIGTERM to the worker itself (not its watchdog), then its own exit status (nil on timeout).
    public func terminate(timeout: Duration = .seconds(60)) async -> Int32? {
        guard let worker = process.programPID else { return nil }
        kill(worker, SIGTERM)
        return await process.wait(timeout: timeout)
    }

    /// ``terminate(timeout:)``, then nil if the worker exited 0; otherwise what a test should
    /// print: its exit status, or, if it still runs after `timeout`, where each of its threads
    /// waits (``procThreadStacks(pid:)``); and the end of its log. A worker still running is
    /// then killed.
    public func terminateFailure(timeout: Duration = .seconds(60)) async -> String? {
        guard let worker = process.programPID else {
            let crash = try? await offPool { crashStacks() }
            return "the worker had already exited; its log ends:\n\(output.suffix(3000))" + (crash.map { "\n\($0)" } ?? "")
        }
        kill(worker, SIGTERM)
        if let status = await process.wait(timeout: timeout) {
            guard status != 0 else { return nil }
            let crash = status > 128 ? try? await offPool { crashStacks() } : nil
            return "the worker exited \(status) after SIGTERM; its log ends:\n\(output.suffix(3000))" + (crash.map { "\n\($0)" } ?? "")
        }
        let stacks = (try? await offPool { procThreadStacks(pid: worker) }) ?? ""
        await kill9()
        return "the worker still ran \(timeout) after SIGTERM. Its threads:\n\(stacks)\nIts log ends:\n\(output.suffix(3000))"
    }

    /// After a crash (killed by a signal: status 128 + n): the stacks in its core, read by gdb,
    /// the crashing thread first. A crash the Swift runtime reports prints its own backtrace to
    /// the log; one it cannot (a stack overflow on a thread without an alternate signal stack)
    /// leaves only this. Without a core or gdb, a line that says so.
    func crashStacks() -> String {
        let core = coreDirectory + "/core"
        guard FileManager.default.fileExists(atPath: core) else { return "(no core in \(coreDirectory))" }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb"),
            let gdb = try? ChildProcess.run(
                "/usr/bin/gdb", ["-batch", "-ex", "bt 60", "-ex", "thread apply all bt 20", executable, core], timeout: .seconds(120))
        else { return "(a core at \(core); no gdb to read it)" }
        return "its core (\(core)), the crashing thread first:\n\(gdb.output.prefix(20_000))"
    }
}
