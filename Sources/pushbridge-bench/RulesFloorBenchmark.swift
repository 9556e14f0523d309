import Rules
import RulesStore

/// The exactness protocol's own work per capped push (docs/benchmarks.md, "What a cap costs"):
/// each step a capped push takes through the owner of its state partition, on one thread, with
/// no Kafka, no FCM and no task hand-off, over the store in memory the rules-store benchmark
/// filled. Per push: its notification ID and subject (SHA-256s), the decision (dedup, a cap by
/// user over the user's notifications, the in-flight table), the reservation encoded as a
/// changelog record and counted at once, then read back as the tail reads it (decoded,
/// admitted, merged again), the read-back's dedup, and the outcome fact the same way.
///
/// What a cap costs at the least in this design, whatever the owner's tasks and Kafka client
/// do: Kafka's produce and read of the two records, and a push's waits for them, come on top.
enum RulesFloorBenchmark {
    static let owner = "pushbridge-floor:0:1:2"

    /// CPU µs per push of `pushes` capped pushes of users `user-0` … (as
    /// ``RulesStoreBenchmark/subject(of:users:)`` names them), at `now`, each allowed.
    static func run(_ store: MemoryRulesStore, users: Int, pushes: Int, now: Int64) throws -> Double {
        let policy = RulesPolicy(sendLimit: 600_000)
        let caps = [CapRule(max: 1_000_000, per: RulesStoreBenchmark.day, by: [.user])]
        var tails: [Int: ChangelogTail] = [:]
        var next: [Int: Int64] = [:]
        for p in 0..<4 {
            var tail = ChangelogTail(owner: owner)
            let offset = (store.nextOffset(partition: Int32(p)) ?? 0) + 1_000_000
            _ = tail.read(.claim(Claim(at: now, owner: owner, partitionCount: 4)), at: offset)
            tails[p] = tail
            next[p] = offset + 1
        }
        var inFlight = InFlightTable()
        let cpu = RulesStoreBenchmark.threadCPUSeconds()
        for i in 0..<pushes {
            let (user, p, targets) = RulesStoreBenchmark.subject(of: i, users: users)
            var attempt = NotificationAttempt(
                notification: NotificationID(eventID: "floor-\(i)", mapping: "chat.message", subject: user),
                subject: CapSubject(user: user, category: "social", mapping: "chat.message", devices: targets.map { DeviceKey(target: $0) }),
                targets: targets, caps: caps, dedupWindow: RulesStoreBenchmark.day, policy: policy, owner: owner)
            guard case .reserve(let reservation) = attempt.decide(now: now, state: store, inFlight: &inFlight) else {
                throw BenchError("push \(i) was not allowed")
            }
            attempt.reserved(at: write(reservation, of: attempt, partition: p, store, &tails[p]!, &next[p]!))
            guard case .send = attempt.readBack(tails[p]!, now: now, state: store) else { throw BenchError("push \(i) was not read back") }
            let outcome = attempt.answered(Dictionary(uniqueKeysWithValues: targets.map { ($0, PushAnswer.accepted) }), deliveredBy: now, now: now)
            _ = write(outcome, of: attempt, partition: p, store, &tails[p]!, &next[p]!)
            _ = attempt.recorded(in: &inFlight)
        }
        return (RulesStoreBenchmark.threadCPUSeconds() - cpu) * 1e6 / Double(pushes)
    }

    /// What the owner and its tail do with one of its facts, but produce it: encoded as a record,
    /// counted at once, decoded and merged again as the tail reads it. Its offset.
    private static func write(
        _ fact: NotificationFact, of attempt: NotificationAttempt, partition p: Int, _ store: MemoryRulesStore, _ tail: inout ChangelogTail,
        _ next: inout Int64
    ) -> Int64 {
        let record = FactCodec.encodeRecord([.notification(fact)])
        let offset = next
        next += 1
        store.addPending(fact, partition: Int32(p), offset: offset, subjects: attempt.possibleSubjects)
        let facts = (try? FactCodec.decodeRecord(record)) ?? []
        let admitted = facts.filter { tail.read($0, at: offset) == .apply }.map { (offset: offset, fact: $0) }
        store.apply(partition: Int32(p), facts: admitted)
        return offset
    }
}
