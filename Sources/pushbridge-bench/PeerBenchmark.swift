import Foundation
import ProcessHarness

/// pushbridge beside the Go peer (`../shared/bench/peer-go`, issue 59): the same events, the same
/// tansu, the same FCM stand-in (`nginx-fcm-latency.conf`, 100 streams per connection), one after
/// the other, the order alternating between rounds.
///
/// Each run: N `message.received` events produced to a fresh topic first, then the worker
/// (pushbridge with default settings and the peer's one mapping, or the peer) started on it.
/// Both are measured the same way, from outside:
/// - events/s at the stub: from its request count first passing 1% of the events to it passing
///   all of them (nginx `stub_status`, read every 20 ms), so neither's start-up, group join,
///   token fetch or final commit is in it;
/// - CPU per event: the process's user + system time from its start until every event is
///   committed, over the events (start-up included, for both);
/// - peak RSS (`VmHWM`).
enum PeerBenchmark {
    /// `baseline`: another build of pushbridge (`PEER_BENCH_BASELINE`), to measure a change in
    /// the same rounds.
    enum Contender: String { case pushbridge, baseline, peer }

    struct Options {
        var bootstrap: String
        var worker: String
        /// Another build of `pushbridge`, run as a third contender.
        var baseline: String?
        /// The peer's binary (built by its `build.sh`).
        var peer: String
        var directory: String
        /// The stub: `{base}/dN` answers after N ms.
        var base: String
        var caFile: String
        var serviceAccount: String
        /// The stub's plain-HTTP port for `/nginx_status`.
        var statusPort: Int
        var events: Int
        var delays: [String]
        /// This round's number: the order of the contenders turns by one each round.
        var round: Int
    }

    /// The peer's mapping (its README), for pushbridge: the same request body but for
    /// `apns-expiration` (checked by `scripts/bench.sh peer`).
    static let mapping = """
        version: 1
        events:
          message.received:
            target: {token: {field: /recipient/device_token}}
            title: {android_key: new_message_title, ios_key: NEW_MESSAGE_TITLE}
            body:
              android_key: new_message_body
              ios_key: NEW_MESSAGE_BODY
              args: [{field: /unread_count}, {field: /sender/display_name}]
            ttl: 1h
            collapse_key: {field: /conversation_id}
        """

    /// One event as the peer's tests write it; `i` makes its token, sender and conversation.
    static func event(_ i: Int) -> String {
        #"{"type":"message.received","id":"evt-\#(i)","occurred_at":"2026-11-22T10:00:00Z","recipient":{"user_id":"u\#(i)","device_token":"bench-token-\#(i)-abcdefghijklmnopqrstuvwxyz0123456789"},"sender":{"display_name":"Sender \#(i)"},"unread_count":\#(i % 100),"conversation_id":"c\#(i % 1000)"}"#
    }

    /// The round's runs, each figure named `peer_{dN}_{contender}_{figure}`.
    static func run(_ o: Options) async throws -> [(name: String, value: Double)] {
        var figures: [(name: String, value: Double)] = []
        for delay in o.delays {
            let all: [Contender] = o.baseline == nil ? [.pushbridge, .peer] : [.pushbridge, .baseline, .peer]
            let order = (0..<all.count).map { all[($0 + o.round - 1) % all.count] }
            for who in order {
                let run = try await one(who, delay: delay, o)
                figures += run.map { ("peer_d\(delay)_\(who.rawValue)_\($0.name)", $0.value) }
            }
        }
        return figures
    }

    /// One run of `who` at the stub path `dN`, on its own topic and group.
    static func one(_ who: Contender, delay: String, _ o: Options) async throws -> [(name: String, value: Double)] {
        let topic = "peer-d\(delay)-r\(o.round)-\(who.rawValue)"
        let endpoint = "\(o.base)/d\(delay)"
        let setup = try EndToEndBenchmark.prepare(
            directory: o.directory, bootstrap: o.bootstrap, topic: topic, worker: who == .baseline ? o.baseline ?? o.worker : o.worker,
            endpoint: endpoint, caFile: o.caFile,
            serviceAccount: o.serviceAccount, group: topic, mapping: mapping)
        let ends = try await EndToEndBenchmark.produce(setup, count: o.events, event: { event($0) })
        let requests0 = try stubRequests(port: o.statusPort)
        let log = "\(o.directory)/\(topic).log"
        let running = try start(who, setup: setup, endpoint: endpoint, ends: ends, log: log, o)
        defer { running.stop() }
        return try await measure(running, events: o.events, statusPort: o.statusPort, requestsBefore: requests0, log: log, who: who.rawValue)
    }

    /// Clocks a contender started on `events` events from outside: events/s at the stub (from
    /// 1% of them to all), CPU per event until every one is committed, peak RSS, how busy the
    /// machine was. `requestsBefore`: the stub's count before the contender started.
    static func measure(
        _ running: Running, events: Int, statusPort: Int, requestsBefore requests0: Int, log: String, who: String
    ) async throws -> [(name: String, value: Double)] {
        // The stub's clock: first past 1% of the events, then past all of them (both fetch their
        // access token from the other nginx, the service account's token_uri).
        let first = max(1, events / 100)
        var t0: ContinuousClock.Instant?
        var t1: ContinuousClock.Instant?
        let deadline = ContinuousClock.now + .seconds(600)
        var reads = 0
        var machine0 = (busy: 0.0, total: 0.0)
        while t1 == nil, ContinuousClock.now < deadline {
            // stub_status counts its own reads too.
            reads += 1
            let n = try stubRequests(port: statusPort) - requests0 - reads
            if t0 == nil, n >= first {
                t0 = .now
                machine0 = machineCPUTicks()
            }
            if n >= events { t1 = .now }
            if t1 == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        guard let t0, let t1 else {
            throw BenchError("\(who) sent too few requests: \((try? String(contentsOfFile: log, encoding: .utf8))?.suffix(1500) ?? "")")
        }
        let machine = machineCPUTicks()
        let allCommitted = try await running.committed()
        let cpu = procCPUSeconds(pid: running.pid())
        let rss = procStatusMegabytes("VmHWM:", pid: running.pid())
        return [
            ("events_per_second", Double(events - first) / KafkaBenchmark.seconds(t1 - t0)),
            ("cpu_us_per_event", cpu * 1e6 / Double(events)),
            ("peak_rss_mb", rss),
            ("all_committed", allCommitted ? 1 : 0),
            // Both cores, over the clocked part: this contender, the stub, tansu, and whatever
            // else runs on the machine.
            ("machine_busy_percent", (machine.busy - machine0.busy) / max(1, machine.total - machine0.total) * 100),
        ]
    }

    /// A contender started: its process for /proc, a wait until every event is committed, a stop.
    struct Running {
        var pid: () -> String
        var committed: () async throws -> Bool
        var stop: () -> Void
    }

    static func start(
        _ who: Contender, setup: EndToEndBenchmark.Setup, endpoint: String, ends: [Int32: Int64], log: String, _ o: Options
    ) throws -> Running {
        switch who {
        case .pushbridge, .baseline:
            let worker = try WorkerProcess.start(setup)
            return Running(
                pid: { String(worker.process.programPID ?? worker.process.pid) },
                committed: { try await EndToEndBenchmark.waitUntilCommitted(setup, ends: ends) }, stop: worker.stop)
        case .peer:
            let process = try ChildProcess(
                executable: o.peer, arguments: [o.bootstrap, setup.topic, String(o.events), endpoint], logFile: log,
                environment: ["PEER_GROUP": setup.group, "SA_FILE": o.serviceAccount, "SSL_CERT_FILE": o.caFile])
            // It prints its summary once every event is committed, then idles until stopped.
            let committed = { () async throws -> Bool in
                let deadline = ContinuousClock.now + .seconds(600)
                while ContinuousClock.now < deadline, process.isRunning {
                    if let text = try? String(contentsOfFile: log, encoding: .utf8), text.contains("peer-go: ") { return true }
                    try await Task.sleep(for: .milliseconds(20))
                }
                return false
            }
            return Running(
                pid: { String(process.programPID ?? process.pid) }, committed: committed, stop: { process.terminate(timeout: .seconds(10)) })
        }
    }

    /// Requests the stub has had so far (nginx `stub_status`, plain HTTP).
    static func stubRequests(port: Int) throws -> Int {
        // "Active connections: 1 \nserver accepts handled requests\n 12 12 340 \n…"
        let text = try HTTPGet.get(port: port, path: "/nginx_status").body
        let lines = text.split(separator: "\n")
        guard lines.count >= 3, let requests = lines[2].split(separator: " ").dropFirst(2).first.flatMap({ Int($0) }) else {
            throw BenchError("cannot read the stub's status: \(text)")
        }
        return requests
    }
}
