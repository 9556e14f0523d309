import Rules
import Synchronization

/// The state of caps and dedup in memory (`rules.state_store: memory`, docs/rules-state.md):
/// what ``RulesStore`` keeps in its SQLite file, kept in dictionaries instead. An owner restores
/// its partition from the changelog's start at every run either way, so the file holds nothing a
/// restart could use; in memory a fact costs a merge and no page writes, and a read no query
/// (docs/benchmarks.md, "What a cap costs"). What it costs is memory, per notification within its
/// longest window (docs/rules-state.md); nothing is left on disk for `render --rules-store`.
///
/// - Reads answer as ``InMemoryRulesState`` over the facts applied and the owner's own facts
///   Kafka acknowledged (``addPending(_:partition:offset:subjects:)``): merges are idempotent, so
///   an own fact goes into the state at once, and its read-back merges it again to no effect.
/// - A cap query looks at the notifications of the key's user or device only (indexed by every
///   subject a notification was seen with), or at every notification for a key by neither.
///
/// `Sendable`: everything behind one `Mutex`, held for a merge or a query, never for I/O.
public final class MemoryRulesStore: RulesStateStore, Sendable {
    public typealias Failure = Never

    private let locked = Mutex(Inner())

    public init() {}

    /// A class, so that the table holds a pointer (a dictionary's slot is its key and value,
    /// and its storage is up to twice its count), and an entry changes in place under the lock.
    private final class Entry {
        var state = NotificationState()
        var partition: Int32
        /// Subjects its facts named besides `state.subject` (rare: reservations that disagree),
        /// so that the indexes can forget it.
        var otherSubjects: [CapSubject] = []

        init(partition: Int32) { self.partition = partition }

        /// Every subject the indexes hold it under.
        var subjects: [CapSubject] { (state.subject.map { [$0] } ?? []) + otherSubjects }
    }

    private struct Inner {
        var entries: [NotificationID: Entry] = [:]
        var index = SubjectIndex()
        /// Notifications by the minute their expiry falls in, for the sweep; an entry whose
        /// expiry moved later is found again in its later minute.
        var byExpiryMinute: [Int64: [NotificationID]] = [:]
        /// Each partition's next offset (facts below it were applied).
        var nextOffsets: [Int32: Int64] = [:]

        mutating func merge(_ fact: NotificationFact, partition: Int32, seen: [CapSubject] = []) {
            let n = fact.notification
            let entry: Entry
            if let known = entries[n] {
                entry = known
            } else {
                entry = Entry(partition: partition)
                entries[n] = entry
            }
            let expiresBefore = entry.state.expires
            let subjectBefore = entry.state.subject
            entry.state.apply(fact)
            entry.partition = partition
            // Filed under every subject seen (nearly always the one it has: no array built).
            func file(_ subject: CapSubject) {
                guard subject != subjectBefore, !entry.otherSubjects.contains(subject) else { return }
                index.insert(n, under: subject)
                if subject != entry.state.subject { entry.otherSubjects.append(subject) }
            }
            if let subject = fact.subject { file(subject) }
            for subject in seen { file(subject) }
            // The state took a lesser subject: the one before joins the others (`otherSubjects`
            // holds every filed subject but the state's; a new array, so an empty one holds no
            // storage).
            if let now = entry.state.subject, now != subjectBefore {
                entry.otherSubjects = entry.otherSubjects.filter { $0 != now } + (subjectBefore.map { [$0] } ?? [])
            }
            if entry.state.expires > expiresBefore { byExpiryMinute[Self.minute(entry.state.expires), default: []].append(n) }
        }

        mutating func remove(_ n: NotificationID) {
            guard let entry = entries.removeValue(forKey: n) else { return }
            for subject in entry.subjects { index.remove(n, under: subject) }
        }

        /// The minute (ms since 1970, rounded up) `instant` falls in.
        static func minute(_ instant: Int64) -> Int64 {
            let (q, r) = instant.quotientAndRemainder(dividingBy: 60_000)
            return (r > 0 ? q + 1 : q) * 60_000
        }
    }

    // MARK: RulesStateStore

    public func apply(partition: Int32, facts: [(offset: Int64, fact: Fact)]) {
        locked.withLock { inner in
            let next = inner.nextOffsets[partition] ?? .min
            for (offset, fact) in facts where offset >= next {
                if case .notification(let f) = fact { inner.merge(f, partition: partition) }
            }
            if let last = facts.last { inner.nextOffsets[partition] = max(next, last.offset + 1) }
        }
    }

    public func addPending(_ fact: NotificationFact, partition: Int32, offset: Int64, subjects: [CapSubject]) {
        locked.withLock { $0.merge(fact, partition: partition, seen: subjects) }
    }

    public func reset(partition: Int32) {
        locked.withLock { inner in
            for (n, entry) in inner.entries where entry.partition == partition { inner.remove(n) }
            inner.nextOffsets[partition] = nil
        }
    }

    /// Forgets up to `limit` notifications whose expiry is at or before `now`: how many.
    public func sweep(now: Int64, limit: Int) -> Int {
        locked.withLock { inner in
            var removed = 0
            for minute in inner.byExpiryMinute.keys.sorted() where minute <= Inner.minute(now) && removed < limit {
                var kept: [NotificationID] = []
                for n in inner.byExpiryMinute.removeValue(forKey: minute) ?? [] {
                    // Gone already, or its expiry moved to a later minute (listed there too).
                    guard let entry = inner.entries[n], Inner.minute(entry.state.expires) == minute else { continue }
                    if removed < limit, entry.state.expires <= now {
                        inner.remove(n)
                        removed += 1
                    } else {
                        kept.append(n)
                    }
                }
                if !kept.isEmpty { inner.byExpiryMinute[minute] = kept }
            }
            return removed
        }
    }

    /// Notifications held.
    public var count: Int { locked.withLock { $0.entries.count } }

    /// The next changelog offset to read for `partition`; nil when nothing was applied.
    public func nextOffset(partition: Int32) -> Int64? { locked.withLock { $0.nextOffsets[partition] } }

    // MARK: RulesState

    public func state(of notification: NotificationID) -> NotificationState? {
        locked.withLock { $0.entries[notification]?.state }
    }

    public func notifications(
        of key: CapKey, countingAfter since: Int64, policy: RulesPolicy
    ) -> [(
        notification: NotificationID, countsUntil: Int64
    )] {
        locked.withLock { inner in
            func counts(_ entry: Entry) -> Int64? {
                guard let subject = entry.state.subject, key.matches(subject),
                    let until = entry.state.countsUntil(sendLimit: policy.sendLimit), until > since
                else { return nil }
                return until
            }
            if let candidates = inner.index.candidates(for: key) {
                return candidates.compactMap { n in inner.entries[n].flatMap(counts).map { (n, $0) } }
            }
            return inner.entries.compactMap { n, entry in counts(entry).map { (n, $0) } }
        }
    }
}
