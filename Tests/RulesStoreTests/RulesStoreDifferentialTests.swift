import Rules
import RulesStore
import TestSupport
import Testing

@Suite("The rules stores answer as InMemoryRulesState (real SQLite files, and the store in memory)")
struct RulesStoreDifferentialTests {
    static let policy = RulesPolicy(sendLimit: 3_000)

    enum Kind: String, CaseIterable { case file, memory }

    @Test(
        "random facts in shuffled orders, with duplicates, split batches and some still pending: every query and verdict the same (seeded)",
        arguments: Kind.allCases)
    func differential(kind: Kind) async throws {
        let (compared, found) = try await offPool {
            let folder = try TemporaryFolder()
            var (compared, found) = (0, 0)
            for seed in UInt64(1)...60 {
                var facts = StoreFacts(seed: seed)
                let unique = (0..<10 + facts.choose(50)).map { _ in facts.fact() }
                var memory = InMemoryRulesState()
                for f in unique { memory.apply(.notification(f)) }
                // The changelog: the facts shuffled, some twice; each partition's in offset order.
                var log = unique + (0..<facts.choose(15)).map { _ in unique[facts.choose(unique.count)] }
                log.shuffle(using: &facts.rng)
                // The last facts are an owner's own, written and not read back yet: pending.
                let pending = seed % 2 == 0 ? facts.choose(log.count / 2 + 1) : 0
                let answers: (compared: Int, found: Int)
                switch kind {
                case .file:
                    let store = try RulesStore(path: folder.path("differential-\(seed).sqlite"))
                    answers = try Self.check(store, log: log, pending: pending, memory: memory, facts: &facts) { try store.nextOffset(partition: $0) }
                case .memory:
                    let store = MemoryRulesStore()
                    answers = try Self.check(store, log: log, pending: pending, memory: memory, facts: &facts) { store.nextOffset(partition: $0) }
                }
                compared += answers.compared
                found += answers.found
            }
            return (compared, found)
        }
        #expect(compared > 10_000, "enough answers compared: \(compared)")
        #expect(found > compared / 10, "enough cap queries found notifications: \(found) of \(compared)")
    }

    /// Applies `log` to `store`, the last `pending` facts as the owner's own, and compares.
    static func check<Store: RulesStateStore>(
        _ store: Store, log: [NotificationFact], pending: Int, memory: InMemoryRulesState, facts: inout StoreFacts,
        nextOffset: (Int32) throws -> Int64?
    ) throws -> (compared: Int, found: Int) {
        try applyInBatches(Array(log.dropLast(pending)), to: store, using: &facts, nextOffset: nextOffset)
        for f in log.suffix(pending) {
            // The subject the merged state ends with, as an owner knows it from its read.
            try store.addPending(
                f, partition: StoreFacts.partition(of: f.notification), offset: .max,
                subjects: [memory.state(of: f.notification)?.subject].compactMap { $0 })
        }
        return try compare(store, memory, facts)
    }

    /// Applies `log` partition by partition, in batches of random sizes, some batches again
    /// (a tail that read them twice).
    static func applyInBatches<Store: RulesStateStore>(
        _ log: [NotificationFact], to store: Store, using facts: inout StoreFacts, nextOffset: (Int32) throws -> Int64?
    ) throws {
        var offsets: [Int32: Int64] = [:]
        var pending: [Int32: [(offset: Int64, fact: Fact)]] = [:]
        for f in log {
            let p = StoreFacts.partition(of: f.notification)
            pending[p, default: []].append((offsets[p, default: 100], .notification(f)))
            offsets[p, default: 100] += 1
        }
        for (p, entries) in pending {
            var rest = entries[...]
            while !rest.isEmpty {
                let batch = Array(rest.prefix(1 + facts.choose(8)))
                try store.apply(partition: p, facts: batch)
                if facts.choose(4) == 0 { try store.apply(partition: p, facts: batch) }
                rest = rest.dropFirst(batch.count)
            }
            #expect(try nextOffset(p) == entries.last.map { $0.offset + 1 })
        }
    }

    /// Asks both every question the verdicts ask; returns how many answers were compared, and
    /// how many cap queries found some notification.
    static func compare<Store: RulesStateStore>(
        _ store: Store, _ memory: InMemoryRulesState, _ facts: StoreFacts
    ) throws -> (compared: Int, found: Int) {
        var (compared, found) = (0, 0)
        for n in facts.notifications {
            #expect(try store.state(of: n) == memory.state(of: n))
            compared += 1
        }
        let sinces = stride(from: StoreFacts.base - 4_000, through: StoreFacts.base + 14_000, by: 1_500)
        for key in facts.keys() {
            for since in sinces {
                let a = Dictionary(uniqueKeysWithValues: try store.notifications(of: key, countingAfter: since, policy: policy).map { ($0.0, $0.1) })
                let b = Dictionary(uniqueKeysWithValues: memory.notifications(of: key, countingAfter: since, policy: policy).map { ($0.0, $0.1) })
                #expect(a == b, "key \(key), since \(since)")
                compared += 1
                found += b.isEmpty ? 0 : 1
            }
        }
        for cap in [
            CapRule(max: 2, per: 5_000, by: [.user]), CapRule(max: 1, per: 2_000, by: [.user, .category]), CapRule(max: 2, per: 8_000, by: [.device]),
        ] {
            for n in facts.notifications {
                guard let subject = facts.subjects[n] else { continue }
                for now in stride(from: StoreFacts.base, through: StoreFacts.base + 15_000, by: 2_500) {
                    func verdict<State: RulesState>(_ state: State) throws -> CapVerdict {
                        try RulesEvaluation.cap(
                            cap, notification: n, subject: subject, now: now, state: state, inFlight: InFlightTable(), policy: policy)
                    }
                    #expect(try verdict(store) == verdict(memory))
                    let targets = ["fid:a", "fid:b"]
                    let dedup = try RulesEvaluation.dedup(n, targets: targets, now: now, window: 6_000, state: store)
                    let expected = RulesEvaluation.dedup(n, targets: targets, now: now, window: 6_000, state: memory)
                    #expect(dedup.send == expected.send && dedup.duplicates == expected.duplicates)
                    compared += 2
                }
            }
        }
        return (compared, found)
    }
}
