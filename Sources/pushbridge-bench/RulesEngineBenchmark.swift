import Foundation
import ProcessHarness

/// What `cap` costs a worker per event (issue 55's budget: at most 15% more CPU): pushbridge on
/// the peer benchmark's events, once with the peer's mapping and once with the same mapping
/// capped per device (`cap: {max: 1000, per: 1h, by: [device]}`, so nothing is withheld: every
/// push pays the reservation, its read-back and the outcome fact, the whole stateful path), on a
/// topic keyed by device token (direct mode, librdkafka's default partitioner). Each event a
/// device of its own: as many subjects as events. Measured from outside like
/// ``PeerBenchmark``; the order turns each round.
enum RulesEngineBenchmark {
    struct Options {
        var bootstrap: String
        var worker: String
        var directory: String
        /// The stub's base URL; `/d0` answers at once.
        var base: String
        var caFile: String
        var serviceAccount: String
        var statusPort: Int
        var events: Int
        var round: Int
    }

    /// `cap`: direct mode, the topic keyed by device; `memory`: the same with the state in
    /// memory (`rules.state_store: memory`); `rekey`: the cap on a topic keyed by position, each
    /// event re-keyed into a by-subject topic first (both stages in the worker).
    enum Mode: String, CaseIterable { case off, cap, memory, rekey }

    static func run(_ o: Options) async throws -> [(name: String, value: Double)] {
        var figures: [(name: String, value: Double)] = []
        let order = (0..<Mode.allCases.count).map { Mode.allCases[($0 + o.round - 1) % Mode.allCases.count] }
        for mode in order {
            figures += try await one(mode, o).map { ("rules_engine_\(mode.rawValue)_\($0.name)", $0.value) }
        }
        return figures
    }

    /// One run on the topic `rules-r<round>-<mode>` (and its changelog `…-changelog`), created
    /// by `scripts/bench.sh` with as many partitions.
    static func one(_ mode: Mode, _ o: Options) async throws -> [(name: String, value: Double)] {
        let topic = "rules-r\(o.round)-\(mode.rawValue)"
        let endpoint = "\(o.base)/d0"
        let mapping = PeerBenchmark.mapping + (mode == .off ? "\n" : "\n    cap: {max: 1000, per: 1h, by: [device]}\n")
        let rules = """
            rules:
              source: {keyed_by: \(mode == .rekey ? "none" : "user"), partitioner: consistent}
              state_store: \(mode == .memory ? "memory" : "file")
              state_path: \(o.directory)/\(topic)-rules.sqlite
              changelog_topic: \(topic)-changelog
              by_subject_topic: \(topic)-by-subject
            """
        let setup = try EndToEndBenchmark.prepare(
            directory: o.directory, bootstrap: o.bootstrap, topic: topic, worker: o.worker, endpoint: endpoint, caFile: o.caFile,
            serviceAccount: o.serviceAccount, group: topic, mapping: mapping, sections: mode == .off ? "" : rules)
        let keyedByToken: @Sendable (Int) -> String = { token($0) }
        let key = mode == .rekey ? nil : keyedByToken
        let ends = try await EndToEndBenchmark.produce(setup, count: o.events, event: { PeerBenchmark.event($0) }, key: key)
        let requests0 = try PeerBenchmark.stubRequests(port: o.statusPort)
        let worker = try WorkerProcess.start(setup)
        defer { worker.stop() }
        let running = PeerBenchmark.Running(
            pid: { String(worker.process.programPID ?? worker.process.pid) },
            committed: { try await EndToEndBenchmark.waitUntilCommitted(setup, ends: ends) }, stop: worker.stop)
        return try await PeerBenchmark.measure(
            running, events: o.events, statusPort: o.statusPort, requestsBefore: requests0, log: worker.log, who: "rules \(mode.rawValue)")
    }

    /// The device token of ``PeerBenchmark/event(_:)`` `i`: the record's key, its subject.
    static func token(_ i: Int) -> String { "bench-token-\(i)-abcdefghijklmnopqrstuvwxyz0123456789" }
}
