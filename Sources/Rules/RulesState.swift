/// The state a worker reads its verdicts from: what the rules store (`RulesStore`) answers
/// from SQLite, and ``InMemoryRulesState`` from a dictionary (tests, the simulation).
///
/// `Failure` is what a read may throw: `Never` in memory (its callers need no `try`), the
/// store's error for a file that cannot be read or holds a damaged row.
public protocol RulesState {
    associatedtype Failure: Error = Never
    /// The merged facts of `notification`, nil for one never seen.
    func state(of notification: NotificationID) throws(Failure) -> NotificationState?
    /// Every notification whose subject `key` matches and that counts until after `since`, with
    /// the instant it counts until (``NotificationState/countsUntil(sendLimit:)``); it may
    /// return more (the evaluation filters again), never fewer. Not the states: a cap needs only
    /// that instant, of each of a user's notifications.
    func notifications(
        of key: CapKey, countingAfter since: Int64, policy: RulesPolicy
    ) throws(Failure) -> [(
        notification: NotificationID, countsUntil: Int64
    )]
}

/// A state its owner writes as well as reads (`RulesStore` is one): the changelog's tail applies
/// what it admits, in offset order, per state partition; the owner's own facts go in as soon as
/// Kafka acknowledged them, before the tail reads them back, so its next decision counts them.
public protocol RulesStateStore: RulesState, Sendable {
    /// Applies `facts` read from changelog partition `partition` at their offsets (never
    /// decreasing: a record's facts share its offset).
    func apply(partition: Int32, facts: [(offset: Int64, fact: Fact)]) throws(Failure)
    /// A fact this owner wrote to `partition` in the record at `offset`, which Kafka
    /// acknowledged: counted in every read until the tail applies it (not kept if the tail has
    /// applied that record already). `subjects`: every subject the notification's merged state
    /// may have meanwhile (its attempt's, and the one read before it).
    func addPending(_ fact: NotificationFact, partition: Int32, offset: Int64, subjects: [CapSubject]) throws(Failure)
    /// Forgets everything of `partition`, for a restore from its start.
    func reset(partition: Int32) throws(Failure)
    /// Deletes up to `limit` notifications that stopped counting by `now` (their expiry passed):
    /// how many rows went. Called again while it returns a full batch.
    func sweep(now: Int64, limit: Int) throws(Failure) -> Int
}

/// ``RulesState`` in memory: facts merged by N. Claims are not notification state and are
/// ignored here (the owner's tail handles them).
public struct InMemoryRulesState: RulesState, Sendable, Equatable {
    public private(set) var notifications: [NotificationID: NotificationState] = [:]

    public init() {}

    public mutating func apply(_ fact: Fact) {
        guard case .notification(let f) = fact else { return }
        notifications[f.notification, default: NotificationState()].apply(f)
    }

    public func state(of notification: NotificationID) -> NotificationState? { notifications[notification] }

    public func notifications(
        of key: CapKey, countingAfter since: Int64, policy: RulesPolicy
    ) -> [(
        notification: NotificationID, countsUntil: Int64
    )] {
        notifications.compactMap { n, state in
            guard let subject = state.subject, key.matches(subject), let until = state.countsUntil(sendLimit: policy.sendLimit), until > since
            else { return nil }
            return (n, until)
        }
    }
}
