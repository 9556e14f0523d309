import Rules

/// Facts this owner wrote to the changelog that the tail has not applied to the file yet
/// (design §5.3): the reads merge them in, so an owner sees its own reservation and outcome
/// before reading them back. Bounded by the sends in flight: each entry leaves when the tail
/// applies the same fact, or when its partition is reset. Pure; ``RulesStore`` keeps it under
/// the lock of its connection, so a read sees a fact in the file or here, never in neither.
struct RulesOverlay: Sendable {
    /// Per notification, its pending facts and their partitions (a fact written twice is here twice).
    private var facts: [NotificationID: [(partition: Int32, fact: NotificationFact)]] = [:]
    private(set) var count = 0
    /// The subject of each pending notification, when a fact of it (here or in the file) named
    /// it: a cap query skips those of other subjects without reading the file.
    private var subjects: [NotificationID: CapSubject] = [:]

    var notifications: Dictionary<NotificationID, [(partition: Int32, fact: NotificationFact)]>.Keys { facts.keys }

    mutating func add(_ fact: NotificationFact, partition: Int32, subject: CapSubject? = nil) {
        facts[fact.notification, default: []].append((partition, fact))
        if let subject = fact.subject ?? subject { subjects[fact.notification] = subject }
        count += 1
    }

    /// The subject of pending notification `n`, if known.
    func subject(of n: NotificationID) -> CapSubject? { subjects[n] }

    /// The tail applied `fact` to `partition`: one pending copy of it leaves.
    mutating func applied(_ fact: NotificationFact, partition: Int32) {
        guard let i = facts[fact.notification]?.firstIndex(where: { $0.partition == partition && $0.fact == fact }) else { return }
        facts[fact.notification]?.remove(at: i)
        if facts[fact.notification]?.isEmpty == true {
            facts[fact.notification] = nil
            subjects[fact.notification] = nil
        }
        count -= 1
    }

    mutating func drop(partition: Int32) {
        for n in Array(facts.keys) {
            facts[n]?.removeAll { $0.partition == partition }
            if facts[n]?.isEmpty == true {
                facts[n] = nil
                subjects[n] = nil
            }
        }
        count = facts.values.reduce(0) { $0 + $1.count }
    }

    /// The merge of `n`'s pending facts, nil when none are pending.
    func state(of n: NotificationID) -> NotificationState? {
        facts[n].map { NotificationState($0.map(\.fact)) }
    }
}
