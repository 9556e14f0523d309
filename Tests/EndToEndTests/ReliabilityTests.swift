import FCMEmulator
import Foundation
import Kafka
import Mapping
import PipelineTestSupport
import Synchronization
import TestSupport
import Testing

/// The reliability suite (docs/reliability.md): `pushbridge run` workers as separate processes
/// against a real broker and the FCM emulator, while faults are injected; then a ledger of every
/// produced event. CI runs the reduced size; `scripts/reliability.sh` runs any size.
@Suite("Reliability: crashes, restarts and fault storms, with a no-loss ledger", .serialized)
struct ReliabilityTests {
    /// The run's size, from the environment so scripts/reliability.sh can set it.
    struct Size: Sendable {
        var events = 20_000
        var kills = 5
        var seed: UInt64 = 8
        /// Events per second the events are produced at, at most: a large run is spread over
        /// time, so its kills meet work in flight from start to end.
        var rate = 4_000

        static var current: Size {
            let env = ProcessInfo.processInfo.environment
            var size = Size()
            if let n = env["PUSHBRIDGE_RELIABILITY_EVENTS"].flatMap(Int.init) { size.events = n }
            if let n = env["PUSHBRIDGE_RELIABILITY_KILLS"].flatMap(Int.init) { size.kills = n }
            if let n = env["PUSHBRIDGE_RELIABILITY_SEED"].flatMap(UInt64.init) { size.seed = n }
            if let n = env["PUSHBRIDGE_RELIABILITY_RATE"].flatMap(Int.init), n > 0 { size.rate = n }
            return size
        }
    }

    static let group = "reliability"
    static let workers = 3
    /// `max_events_in_flight` of each worker, and how many finished events may wait for a commit:
    /// together the most one crash can make the next owner send again (tansu drops the offset
    /// map, so finished events past the committed offset are sent again too).
    static let inFlight = 500
    static let commitEvery = 250
    static var window: Int { inFlight + commitEvery }
    static let delivery = """
        max_events_in_flight: \(inFlight)
        partition_buffer: 250
        commit_every_events: \(commitEvery)
        shutdown_timeout_ms: 5000
        unknown_event_types: dead-letter
        """

    @Test("tansu: kill -9 of workers at seeded moments and FCM storms: nothing lost, duplicates within the window per crash")
    func crashesAndStorms() async throws {
        try await Self.chaos(on: .tansu, name: "reliability")
    }

    @Test("mock cluster: kill -9, a rolling restart, commit errors, coordinator moves, FCM storms; cooperative-sticky with static membership")
    func mockClusterFaults() async throws {
        try await Self.chaos(on: .mock, name: "mock_cluster")
    }

    /// Workers killed and restarted while events flow and FCM storms; on the mock cluster also a
    /// rolling restart and Kafka faults. Then every offset must be committed and the ledger
    /// must balance.
    ///
    /// On tansu the workers use eager `range` and there is no rolling restart: tansu 0.6 leaves
    /// members that join after a graceful leave without an assignment (docs/reliability.md).
    static func chaos(on broker: EndToEnd.Broker, name: String) async throws {
        var size = Size.current
        if broker == .mock { size.events = min(size.events, 20_000) }  // the mock keeps a few MB per partition
        let started = ContinuousClock.now
        let e = try await EndToEnd(partitions: Self.chaosPartitions, broker: broker, brokers: broker == .mock ? 3 : 1)
        try await Self.prepareRules(e)
        var rng = SplitMix64(seed: size.seed)
        let onMock = broker == .mock
        var starts = 0
        func start(_ i: Int) async throws -> WorkerProcess {
            starts += 1
            return try await e.startWorker(
                group: Self.group, delivery: Self.delivery, instanceID: onMock ? "worker-\(i)" : nil,
                assignment: onMock ? "cooperative-sticky" : "range", sections: Self.rulesSections(e, start: starts))
        }
        var workers: [WorkerProcess] = []
        for i in 0..<Self.workers { workers.append(try await start(i)) }
        var everyWorker = workers
        Self.progress(
            "\(name): \(size.events) events, \(size.kills) kills, seed \(size.seed) (PUSHBRIDGE_RELIABILITY_SEED replays it)", since: started)

        // Production is spread over the time the faults take (at least), so every kill meets work
        // in flight; kills come every 2.3 s on average, or spread over a longer production.
        let killGap = max(2.3, Double(size.events) / Double(size.rate) / Double(max(1, size.kills)))
        let chaosSeconds = Double(size.kills) * killGap + (onMock ? Double(Self.workers) * 3 : 0) + 5
        let producer = Task {
            try await Self.produce(size, into: e, over: chaosSeconds, maxPoisonBytes: onMock ? 8_000 : 100_000, rules: true)
        }
        let storms = Task { await Self.storms(e.emulator, seed: size.seed) }
        let kafkaFaults = Task { if let cluster = e.mock { await Self.kafkaFaults(cluster, seed: size.seed) } }

        var kills = 0
        for _ in 0..<size.kills {
            try await Task.sleep(for: .milliseconds(Int.random(in: 500...Int((killGap - 0.8) * 2000) - 500, using: &rng)))
            let i = Int.random(in: 0..<workers.count, using: &rng)
            await workers[i].kill9()
            kills += 1
            Self.progress("kill -9 of worker \(i) (\(kills)/\(size.kills))", since: started)
            try await Task.sleep(for: .milliseconds(Int.random(in: 100...1500, using: &rng)))
            workers[i] = try await start(i)
            everyWorker.append(workers[i])
        }
        var restarts = 0
        if onMock {
            for i in workers.indices {  // rolling restart: one at a time, SIGTERM drains
                // A worker restarted after a kill may still be starting: its signal handling is in
                // place once it logs "consuming" (before that a SIGTERM ends it with 143).
                let deadline = ContinuousClock.now + .seconds(30)
                while !workers[i].output.contains(#""msg":"consuming""#), ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(50))
                }
                await expectCleanExit(workers[i])
                restarts += 1
                Self.progress("rolling restart of worker \(i)", since: started)
                workers[i] = try await start(i)
                everyWorker.append(workers[i])
                try await Task.sleep(for: .seconds(1))
            }
        }
        var ledger = try await producer.value
        storms.cancel()
        kafkaFaults.cancel()
        await storms.value
        await kafkaFaults.value
        Self.progress("faults over; waiting for every offset to be committed", since: started)

        let settled = try await Self.waitUntilCommitted(e, timeout: .seconds(max(600, size.events / 500)))
        #expect(settled, "every produced offset committed:\n\(workers.map { $0.output.suffix(800) }.joined(separator: "\n"))")
        let (decided, rekeyed) = try await Self.waitUntilDecided(e, records: ledger.capped?.records ?? 0, timeout: .seconds(300))
        ledger.capped?.rekeyed = rekeyed
        #expect(decided, "every re-keyed capped event decided:\n\(workers.map { $0.output.suffix(800) }.joined(separator: "\n"))")
        let deferredSent = try await Self.waitUntilDeferredSent(e, due: ledger.deferred, timeout: .seconds(180))
        #expect(deferredSent, "every deferred push sent:\n\(workers.map { $0.output.suffix(800) }.joined(separator: "\n"))")
        for w in workers { _ = await w.terminate() }
        // A worker that loses its partitions (its session timed out: the coordinator was out of
        // reach), or gives up the events in flight of partitions revoked from it (the revoke
        // timeout ran out), hands them to the next owner, as a crash does.
        let handoffs = [#""msg":"lost""#, "revoke: events still in flight are given up"]
        let losses = everyWorker.reduce(0) { n, w in
            let log = w.output
            return n + handoffs.reduce(0) { $0 + log.components(separatedBy: $1).count - 1 }
        }
        let crashes = max(1, kills + restarts + losses)
        let settlement = try await Self.settle(
            e, ledger: ledger, kills: kills, restarts: restarts, losses: losses, started: started, name: name)
        #expect(settlement.duplicates <= crashes * Self.window, "duplicates beyond \(crashes) crashes × \(Self.window)")
        await e.stop()
    }

    @Test("tansu killed with -9 and restarted on durable s3:// storage mid-stream: nothing lost")
    func brokerRestart() async throws {
        let size = Size.current
        let started = ContinuousClock.now
        let e = try await EndToEnd(partitions: 4, broker: .durableTansu)
        var workers: [WorkerProcess] = []
        for _ in 0..<2 { workers.append(try await e.startWorker(group: Self.group, delivery: Self.delivery, assignment: "range")) }
        let events = min(size.events, 5_000)
        let producer = Task { try await Self.produce(Size(events: events, kills: 0, seed: size.seed), into: e, over: 6) }
        try await Task.sleep(for: .seconds(3))
        try await e.restartBroker(downtime: .seconds(2))
        let ledger = try await producer.value

        let settled = try await Self.waitUntilCommitted(e, timeout: .seconds(300))
        #expect(
            settled, "every produced offset committed after the broker restart:\n\(workers.map { $0.output.suffix(800) }.joined(separator: "\n"))")
        for w in workers { await expectCleanExit(w) }
        let settlement = try await Self.settle(e, ledger: ledger, kills: 0, restarts: 1, started: started, name: "broker_restart")
        #expect(settlement.duplicates <= 2 * Self.window)
        await e.stop()
    }

    // MARK: Parts

    /// Produces `size.events` good events and 1% poison ones (malformed events whose dead-letter
    /// reason is known), in batches spread over `seconds`; with `rules`, 1% more whose users'
    /// preferences send or withhold them (``prepareRules(_:)``) and about 1% capped events.
    static func produce(
        _ size: Size, into e: EndToEnd, over seconds: Double, maxPoisonBytes: Int = 100_000, rules: Bool = false
    ) async throws -> Ledger {
        var ledger = Ledger(capped: rules ? CappedSubjects(max: capMax) : nil)
        var rng = SplitMix64(seed: size.seed ^ 0xB0B)
        let batch = 1_000
        let batches = max(1, (size.events + batch - 1) / batch)
        let pause = Duration.milliseconds(Int(seconds * 1000) / batches)
        for b in 0..<batches {
            let n = min(batch, size.events - b * batch)
            let tokens = try await e.produce(n, prefix: "r\(b)")
            var poison: [String: Set<String>] = [:]
            var records: [KafkaProducerRecord] = []
            var attempt = b
            while records.count < n / 100 {
                let input = MalformedEvent.generate(attempt, using: &rng)
                attempt += 1
                // Larger ones are fuzzed through the mapping core alone (FuzzTests): the mock
                // cluster keeps only a few MB per partition.
                guard let expected = input.expectedFailures, input.value.count <= maxPoisonBytes else { continue }
                let key = "poison-\(b)-\(records.count)"
                poison[key] = expected
                records.append(
                    KafkaProducerRecord(
                        topic: e.topic, key: Array(key.utf8), value: input.value,
                        headers: input.headers.map { KafkaHeader(name: $0.name, value: $0.value) }))
            }
            if rules {
                let nudged = Self.nudges(batch: b, count: max(1, n / 100), topic: e.topic)
                records += nudged.records
                ledger.tokens += nudged.sent
                ledger.withheld += nudged.withheld
                let capped = Self.cappedRecords(batch: b, topic: e.topic)
                records += capped.records
                ledger.capped?.written.merge(capped.written) { a, _ in a }
                let later = Self.laterRecords(batch: b, count: max(1, n / 100), topic: e.topic, using: &rng)
                records += later.records
                ledger.tokens += later.due.keys.sorted()
                ledger.deferred.merge(later.due) { a, _ in a }
            }
            try await e.events.produce(records: records)
            progress("produced batch \(b + 1)/\(batches)", since: nil)
            ledger.tokens += tokens
            ledger.poison.merge(poison) { a, _ in a }
            try await Task.sleep(for: pause)
        }
        return ledger
    }

    /// Waits until the group has committed every produced offset, with a progress line every
    /// 10 s (a full-size run takes a while).
    static func waitUntilCommitted(_ e: EndToEnd, timeout: Duration) async throws -> Bool {
        let started = ContinuousClock.now
        let ends = e.events.producedEnds
        let total = ends.values.reduce(0, +)
        var last = (at: started, done: Int64(0))
        while ContinuousClock.now - started < timeout {
            let committed = try await e.events.committed(group: group)
            if ends.allSatisfy({ committed[$0.key] ?? -1 >= $0.value }) { return true }
            if ContinuousClock.now - last.at >= .seconds(10) {
                let done = ends.keys.reduce(Int64(0)) { $0 + min(committed[$1] ?? 0, ends[$1]!) }
                let seconds = Double((ContinuousClock.now - last.at).components.seconds)
                progress("committed \(done) of \(total) offsets (\(Int(Double(done - last.done) / seconds))/s)", since: nil)
                last = (.now, done)
            }
            try await Task.sleep(for: .seconds(1))
        }
        return false
    }

    static func progress(_ what: String, since start: ContinuousClock.Instant?) {
        let at = start.map { " at \(($0.duration(to: .now)).formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))" } ?? ""
        FileHandle.standardError.write(Data("[reliability]\(at) \(what)\n".utf8))
    }

    /// Kafka faults on the mock cluster until cancelled, chosen by a seeded generator: failing
    /// commits, the coordinator moving, a broker down for 0.5–2 s and up again.
    static func kafkaFaults(_ cluster: KafkaMockCluster, seed: UInt64) async {
        var rng = SplitMix64(seed: seed ^ 0xCAFE)
        while !Task.isCancelled {
            switch rng.next() % 3 {
            case 0:
                cluster.pushRequestErrors(.offsetCommit, [.requestTimedOut, .notCoordinator, .coordinatorNotAvailable])
            case 1:
                try? cluster.setGroupCoordinator(group, brokerID: Int32(1 + rng.next() % 3))
            default:
                let broker = Int32(1 + rng.next() % 3)
                try? cluster.setBrokerDown(broker)
                try? await Task.sleep(for: .milliseconds(Int.random(in: 500...2000, using: &rng)))
                try? cluster.setBrokerUp(broker)
                progress("mock broker \(broker) was down", since: nil)
            }
            try? await Task.sleep(for: .milliseconds(Int.random(in: 1000...3000, using: &rng)))
        }
    }

    /// FCM storms until cancelled: 503 and 500 bursts, 429 with Retry-After, latency, dropped
    /// connections, each for 1–3 s, chosen by a seeded generator.
    static func storms(_ emulator: FCMEmulator, seed: UInt64) async {
        var rng = SplitMix64(seed: seed ^ 0x5707)
        while !Task.isCancelled {
            var faults = EmulatorFaults()
            switch rng.next() % 6 {
            case 0: faults.burst = .init(status: 503, count: 40)
            case 1: faults.burst = .init(status: 429, count: 10, retryAfterSeconds: 1)
            case 2: faults.rate = .init(status: 500, probability: 0.05)
            case 3: faults.latencyMilliseconds = 100
            case 4: faults.dropConnectionEvery = 200
            default: break
            }
            emulator.setFaults(faults)
            try? await Task.sleep(for: .milliseconds(Int.random(in: 1000...3000, using: &rng)))
        }
        emulator.setFaults(EmulatorFaults())
    }

    /// Reads the dead-letter topic, settles the ledger, prints the figures and checks that
    /// nothing is lost.
    static func settle(
        _ e: EndToEnd, ledger: Ledger, kills: Int, restarts: Int, losses: Int = 0, started: ContinuousClock.Instant,
        name: String = "reliability"
    ) async throws -> Ledger.Settlement {
        let deadLetters = try await e.events.readAll(e.deadLetterTopic)
        let s = ledger.settle(accepted: e.acceptedTokens, deadLetters: deadLetters, delivered: Self.delivered(e.emulator))
        let crashes = max(1, kills + restarts + losses)
        print(
            """
            \(name)_events: \(ledger.events)
            \(name)_kills: \(kills)
            \(name)_graceful_restarts: \(restarts)
            \(name)_partition_handoffs: \(losses)
            \(name)_lost: \(s.lost.count)
            \(name)_duplicates: \(s.duplicates)
            \(name)_duplicates_per_crash: \(s.duplicates / crashes)
            \(name)_duplicate_window_per_crash: \(window)
            \(name)_dead_lettered: \(s.deadLettered)
            \(name)_withheld: \(s.withheld)
            \(name)_withheld_but_sent: \(s.wronglySent.count)
            \(name)_wall_time_s: \(Int((ContinuousClock.now - started).components.seconds))
            """)
        if let capped = ledger.capped, let caps = s.caps { Self.report(caps, of: capped, name: name) }
        if !ledger.deferred.isEmpty { Self.reportDeferred(e.emulator, due: ledger.deferred, name: name) }
        #expect(s.lost.isEmpty, "lost: \(s.lost.prefix(20))")
        #expect(s.wrongReason.isEmpty, "\(s.wrongReason.prefix(10))")
        for line in s.goodDeadLettered { FileHandle.standardError.write(Data("[reliability] good event dead-lettered: \(line)\n".utf8)) }
        #expect(s.goodDeadLettered.isEmpty, "good events dead-lettered: \(s.goodDeadLettered.prefix(10))")
        #expect(s.wronglySent.isEmpty, "pushes a muted category should have withheld: \(s.wronglySent.prefix(10))")
        return s
    }
}
