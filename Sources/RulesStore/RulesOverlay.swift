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
    /// Every subject a pending notification was seen with (its pending facts', and those the
    /// owner passed: its attempt's and the one its decision read). Its merged subject is one of
    /// them (the merge keeps the least), so a cap query skips a notification none of whose
    /// subjects matches, without reading the file.
    private var subjects: [NotificationID: [CapSubject]] = [:]
    /// Pending notifications by their subjects' users and devices, so that a cap query by user
    /// or device looks at those only, not at everything in flight.
    private var index = SubjectIndex()

    /// Whether `n` has facts pending.
    func isPending(_ n: NotificationID) -> Bool { facts[n] != nil }

    /// The pending notifications that may count toward `key`: those with a subject of its user
    /// or device (or every one, for a key by neither), then only those with a subject it
    /// matches, or with no subject known.
    func candidates(for key: CapKey) -> [NotificationID] {
        let indexed = index.candidates(for: key)
        let unknown = subjects.count < facts.count ? facts.keys.filter { subjects[$0] == nil } : []
        let known = indexed.map(Array.init) ?? Array(subjects.keys)
        return known.filter { subjects[$0]?.contains(where: key.matches) == true } + unknown
    }

    /// Keeps `fact`, pending in `partition`; `seen`: other subjects the notification's merged
    /// state may have (``RulesStore/addPending(_:partition:offset:subjects:)``).
    mutating func add(_ fact: NotificationFact, partition: Int32, seen: [CapSubject] = []) {
        let n = fact.notification
        facts[n, default: []].append((partition, fact))
        for subject in (fact.subject.map { [$0] } ?? []) + seen where subjects[n]?.contains(subject) != true {
            subjects[n, default: []].append(subject)
            index.insert(n, under: subject)
        }
        count += 1
    }

    /// `n` has no pending fact left.
    private mutating func forget(_ n: NotificationID) {
        facts[n] = nil
        for subject in subjects.removeValue(forKey: n) ?? [] { index.remove(n, under: subject) }
    }

    /// The tail applied `fact` to `partition`: one pending copy of it leaves.
    mutating func applied(_ fact: NotificationFact, partition: Int32) {
        guard let i = facts[fact.notification]?.firstIndex(where: { $0.partition == partition && $0.fact == fact }) else { return }
        facts[fact.notification]?.remove(at: i)
        if facts[fact.notification]?.isEmpty == true { forget(fact.notification) }
        count -= 1
    }

    mutating func drop(partition: Int32) {
        for n in Array(facts.keys) {
            facts[n]?.removeAll { $0.partition == partition }
            if facts[n]?.isEmpty == true { forget(n) }
        }
        count = facts.values.reduce(0) { $0 + $1.count }
    }

    /// The merge of `n`'s pending facts, nil when none are pending.
    func state(of n: NotificationID) -> NotificationState? {
        facts[n].map { NotificationState($0.map(\.fact)) }
    }
}
