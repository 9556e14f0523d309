import Foundation
import PipelineTestSupport
import ProcessHarness
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A test's own network namespace (``NetworkNamespace``) with tansu, the FCM emulator and
/// `pushbridge run` workers inside it, all separate processes on the namespace's loopback, so
/// that its firewall can make their connections fail: blackholed (every packet dropped, no RST,
/// no FIN, as a cloud NAT or a failed-over load balancer does), lossy, or refused.
///
/// Nothing of the test process lives in the namespace but short synchronous calls
/// (``NetworkNamespace/perform(_:)``): the events come from a Python producer run inside it, the
/// emulator is `pushbridge emulator` recording what it accepts into a file, and the workers are
/// observed through their `/metrics`.
final class FaultNetwork: @unchecked Sendable {
    let namespace: NetworkNamespace
    let tansu: Tansu
    let directory: URL
    let topic = "events"
    let deadLetterTopic = "dead-letter"
    let invalidationTopic = "invalidations"
    /// `pushbridge emulator`, and where it listens.
    let emulator: ChildProcess
    let emulatorPort: Int
    /// The messages the emulator accepted, one JSON line each (`--record`).
    let recordFile: String
    /// The next offset per partition after everything produced so far.
    private let ends = Mutex<[Int32: Int64]>([:])

    /// - Parameters:
    ///   - emulatorArguments: more `pushbridge emulator` options, e.g. `--token-lifetime 75`.
    init(partitions: Int32 = 4, emulatorArguments: [String] = []) async throws {
        let namespace = try NetworkNamespace(prefix: "pbnet")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-netfault-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let record = directory.appendingPathComponent("accepted.jsonl").path
        (tansu, emulator, emulatorPort) = try await namespace.perform { [topic, deadLetterTopic, invalidationTopic] in
            let tansu = try Tansu()
            try tansu.createTopic(topic, partitions: partitions)
            try tansu.createTopic(deadLetterTopic, partitions: 1)
            try tansu.createTopic(invalidationTopic, partitions: 1)
            let (port, emulator) = try FreePort.startServer { port in
                let child = try ChildProcess(
                    executable: pushbridgeExecutable,
                    arguments: [
                        "emulator", "--port", String(port), "--state-dir", directory.appendingPathComponent("emulator").path, "--record", record,
                    ] + emulatorArguments,
                    logFile: directory.appendingPathComponent("emulator.log").path)
                try child.waitUntilListening(port: port, timeout: .seconds(30))
                // It writes its CA and key file just after it listens.
                let files = ["ca.pem", "service-account.json"].map { directory.appendingPathComponent("emulator/\($0)").path }
                let deadline = ContinuousClock.now + .seconds(10)
                while !files.allSatisfy(FileManager.default.fileExists(atPath:)) {
                    guard ContinuousClock.now < deadline else { throw TestSupportError("the emulator wrote no \(files)") }
                    usleep(20_000)
                }
                return (port, child)
            }
            return (tansu, emulator, port)
        }
        (self.namespace, self.directory, recordFile) = (namespace, directory, record)
        try WelcomeEvents.mapping.write(to: directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
    }

    deinit {
        emulator.terminate()
        try? FileManager.default.removeItem(at: directory)
    }

    var bootstrapServers: String { tansu.bootstrapServers }
    /// The port clients reach the broker on.
    var brokerPort: Int { Int(bootstrapServers.split(separator: ":").last!)! }
    var emulatorDirectory: String { directory.appendingPathComponent("emulator").path }

    /// Produces `count` welcome events (tokens and keys `prefix-i`) from inside the namespace, at
    /// most `rate` a second (nil: at once); returns the tokens once all are acknowledged.
    @discardableResult
    func produce(_ count: Int, prefix: String, rate: Double? = nil) async throws -> [String] {
        try await finish(startProducing(count, prefix: prefix, rate: rate))
    }

    /// Starts producing as ``produce(_:prefix:rate:)`` does, in the background: ``finish(_:)``
    /// waits for it.
    func startProducing(_ count: Int, prefix: String, rate: Double? = nil) async throws -> Producer {
        let script = Repository.root + "/Tests/TestSupport/Resources/produce_events.py"
        var arguments = ["python3", script, "--bootstrap", bootstrapServers, "--topic", topic, "--count", String(count), "--prefix", prefix]
        if let rate { arguments += ["--rate", String(rate)] }
        let log = directory.appendingPathComponent("producer-\(prefix).log").path
        let process = try await namespace.perform { [arguments] in
            try ChildProcess(executable: "/usr/bin/env", arguments: arguments, logFile: log, environment: ["PYTHONPATH": Repository.tool("python")])
        }
        return Producer(process: process, tokens: (0..<count).map { "\(prefix)-\($0)" })
    }

    /// A producer started by ``startProducing(_:prefix:rate:)``.
    struct Producer: Sendable {
        let process: ChildProcess
        let tokens: [String]
    }

    /// Waits for `producer` to finish and notes what it produced; returns its tokens.
    func finish(_ producer: Producer, timeout: Duration = .seconds(300)) async throws -> [String] {
        let status = await producer.process.wait(timeout: timeout)
        let output = (try? String(contentsOfFile: producer.process.logFile, encoding: .utf8)) ?? ""
        guard status == 0, let line = output.split(separator: "\n").last,
            case let object as [String: Any] = try? JSONSerialization.jsonObject(with: Data(line.utf8)),
            let produced = object["ends"] as? [String: Int]
        else { throw TestSupportError("produce_events.py failed (\(status.map(String.init) ?? "timed out")): \(output.suffix(1000))") }
        ends.withLock { ends in
            for (partition, end) in produced { ends[Int32(partition)!] = max(ends[Int32(partition)!] ?? 0, Int64(end)) }
        }
        return producer.tokens
    }

    /// The next offset per partition after everything produced.
    var producedEnds: [Int32: Int64] { ends.withLock { $0 } }

    /// Writes a worker's config and starts it inside the namespace. `sessionTimeout`: 6 s, as in
    /// every test (tansu's first join waits half of it, brokers.md). `fcm` lines are added to the
    /// `fcm` section, `delivery` lines to `delivery`, `kafka` lines to `kafka`; `serviceAccount`
    /// is the key file (the emulator's, unless a test rewrote it).
    func startWorker(
        group: String = "netfault", sessionTimeout: Duration = .seconds(6), fcm: [String] = [], delivery: [String] = [],
        kafka: [String] = [], serviceAccount: String? = nil
    ) async throws -> WorkerProcess {
        let account = serviceAccount ?? emulatorDirectory + "/service-account.json"
        return try await namespace.perform { [self] in
            try FreePort.startServer { port in
                let text = """
                    kafka:
                      brokers: [\(bootstrapServers)]
                      group: \(group)
                      topics: [\(topic)]
                      session_timeout_ms: \(sessionTimeout.milliseconds)
                    \(kafka.map { "  " + $0 }.joined(separator: "\n"))
                    mappings: [mappings.yaml]
                    fcm:
                      service_account: \(account)
                      endpoint: https://127.0.0.1:\(emulatorPort)
                      ca_file: \(emulatorDirectory)/ca.pem
                      retry: {\(EndToEnd.testRetry)}
                    \(fcm.map { "  " + $0 }.joined(separator: "\n"))
                    topics: {dead_letter: \(deadLetterTopic), token_invalidation: \(invalidationTopic)}
                    delivery:
                      commit_interval_ms: 200
                    \(delivery.map { "  " + $0 }.joined(separator: "\n"))
                    http: {listen: "127.0.0.1:\(port)"}
                    log: {level: info, format: json}
                    """
                let config = directory.appendingPathComponent("\(group)-\(port).yaml").path
                try text.write(toFile: config, atomically: true, encoding: .utf8)
                let log = directory.appendingPathComponent("worker-\(port).log").path
                return try WorkerProcess.start(executable: pushbridgeExecutable, config: config, port: port, log: log)
            }
        }
    }

    /// A worker's metric (``WorkerProcess/metric(_:)``), read from inside the namespace.
    func metric(_ worker: WorkerProcess, _ series: String) async throws -> Double {
        try await namespace.perform { try worker.metric(series) }
    }

    /// `GET path` of a worker's HTTP endpoint, from inside the namespace.
    func get(_ worker: WorkerProcess, _ path: String) async throws -> (status: Int, body: String) {
        try await namespace.perform { try worker.get(path) }
    }

    /// Tokens the emulator accepted, with how often each was.
    func accepted() -> [String: Int] {
        var counts: [String: Int] = [:]
        for message in acceptedMessages() { counts[message.token, default: 0] += 1 }
        return counts
    }

    /// What the emulator accepted, in order: the token and when (seconds since it started).
    func acceptedMessages() -> [(token: String, time: Double)] {
        let text = (try? String(contentsOfFile: recordFile, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard case let object as [String: Any] = try? JSONSerialization.jsonObject(with: Data(line.utf8)),
                let token = object["token"] as? String, let time = object["time"] as? Double
            else { return nil }
            return (token, time)
        }
    }

    /// The established TCP connections to `remotePort` (their client ends), of `process` only
    /// if given.
    func connections(of process: pid_t? = nil, to remotePort: Int) async throws -> [TCPSocket] {
        let sockets = try await namespace.perform { try TCPSocket.all() }
        let mine = process.map { TCPSocket.inodes(ofProcess: $0) }
        return sockets.filter { socket in socket.isEstablished && socket.remotePort == remotePort && (mine?.contains(socket.inode) ?? true) }
    }

    /// A copy of the emulator's service-account key file whose `token_uri` is `tokenURI`.
    func serviceAccount(tokenURI: String) throws -> String {
        let original = emulatorDirectory + "/service-account.json"
        var account = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: original))) as? [String: Any])
        account["token_uri"] = tokenURI
        let path = directory.appendingPathComponent("service-account-\(UUID().uuidString).json").path
        try JSONSerialization.data(withJSONObject: account).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Makes these connections drop every packet, both ways, from now on: no RST, no FIN. The
    /// rules name both ports: a rule on the client's port alone also dropped other connections
    /// that Linux gave the same local port to another destination (a metrics poll's SYN, in CI).
    func blackhole(_ connections: [TCPSocket]) async throws {
        for c in connections {
            try await namespace.perform { [namespace] in
                let (local, remote) = (String(c.localPort), String(c.remotePort))
                try namespace.iptables(["-A", "INPUT", "-p", "tcp", "--sport", local, "--dport", remote, "-j", "DROP"])
                try namespace.iptables(["-A", "INPUT", "-p", "tcp", "--sport", remote, "--dport", local, "-j", "DROP"])
            }
        }
    }

    /// Drops this share of every TCP packet in the namespace, both ways, while `on`; takes the
    /// rule out again when not.
    func dropRandomly(_ probability: Double, _ on: Bool = true) async throws {
        try await rule(["INPUT", "-p", "tcp", "-m", "statistic", "--mode", "random", "--probability", String(probability), "-j", "DROP"], on)
    }

    /// Makes every packet to and from `port` drop (new connections too) while `on`; takes the
    /// rules out again when not.
    func unreachable(_ port: Int, _ on: Bool = true) async throws {
        for direction in ["--dport", "--sport"] { try await rule(["INPUT", "-p", "tcp", direction, String(port), "-j", "DROP"], on) }
    }

    /// Adds a firewall rule (`-A`), or deletes it (`-D`).
    private func rule(_ rule: [String], _ on: Bool) async throws {
        try await namespace.perform { [namespace] in try namespace.iptables([on ? "-A" : "-D"] + rule) }
    }

    /// Takes every rule out again.
    func heal() async throws {
        try await namespace.perform { [namespace] in try namespace.iptables(["-F", "INPUT"]) }
    }

    /// The sum of a worker's committed offsets, sampled every `every` until `done` holds or
    /// `timeout` passes, with when each sample was taken.
    func commitTimeline(
        _ worker: WorkerProcess, every: Duration = .milliseconds(200), timeout: Duration, until done: @Sendable (Double) -> Bool
    ) async -> [(at: ContinuousClock.Instant, committed: Double)] {
        var samples: [(at: ContinuousClock.Instant, committed: Double)] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let committed = try? await metric(worker, "pushbridge_committed_offset") {
                samples.append((.now, committed))
                if done(committed) { break }
            }
            try? await Task.sleep(for: every)
        }
        return samples
    }
}

/// The longest time in `samples`, from `from` on, between one sum of committed offsets and the
/// first larger one (a worker that lost its partitions reports none for a while: that is no
/// progress either), counting a stretch still open at the end if it is below `target`: how
/// long a fault stalled delivery.
func longestStall(_ samples: [(at: ContinuousClock.Instant, committed: Double)], from: ContinuousClock.Instant, target: Double) -> Duration {
    var longest: Duration = .zero
    var best: (value: Double, since: ContinuousClock.Instant)?
    for sample in samples where sample.at >= from {
        guard let held = best else {
            best = (sample.committed, sample.at)
            continue
        }
        if sample.committed > held.value {
            longest = max(longest, sample.at - held.since)
            best = (sample.committed, sample.at)
        }
    }
    if let held = best, held.value < target, let end = samples.last?.at { longest = max(longest, end - held.since) }
    return longest
}
