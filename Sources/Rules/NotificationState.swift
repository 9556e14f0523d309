/// What the changelog says about one notification: the merge of all its facts.
///
/// The merge is a join-semilattice: each part is a maximum or a union, so applying any
/// permutation of a set of facts, with duplicates, gives the same state (RulesTests' property
/// test). Per attempt the greatest status is kept (`reserved` < `released` < `in_doubt` <
/// `sent`) with the latest time; the notification's status is then `sent` if any attempt was
/// acknowledged, else `in_doubt` if any may have been delivered, else `reserved` if any attempt
/// is unresolved, else `released`. Keeping each attempt (not only the highest, as the design's
/// §5.3 first put it) means a later attempt's `released` never hides an earlier attempt whose
/// owner died while sending: that one stays unresolved and keeps counting.
public struct NotificationState: Hashable, Sendable {
    /// Per attempt number: its greatest status and that status's latest time.
    public internal(set) var attempts: [UInt32: AttemptState] = [:]
    /// Acknowledged device pushes, each with its latest acknowledgement.
    public internal(set) var devices: [DevicePushID: Int64] = [:]
    /// What the notification is (from its reservations; the least if they disagree).
    public internal(set) var subject: CapSubject?
    /// The latest expiry of its facts.
    public internal(set) var expires: Int64 = .min

    public struct AttemptState: Hashable, Sendable, Comparable {
        public var status: FactStatus
        public var at: Int64

        public static func < (a: AttemptState, b: AttemptState) -> Bool { (a.status, a.at) < (b.status, b.at) }
    }

    public init() {}

    public init(_ facts: some Sequence<NotificationFact>) {
        for fact in facts { apply(fact) }
    }

    /// Merges one fact in (of this notification; the caller keys states by N).
    public mutating func apply(_ fact: NotificationFact) {
        let incoming = AttemptState(status: fact.status, at: fact.at)
        if let current = attempts[fact.attempt] {
            attempts[fact.attempt] = max(current, incoming)
        } else {
            attempts[fact.attempt] = incoming
        }
        for d in fact.devices { devices[d] = max(devices[d] ?? .min, fact.at) }
        if let s = fact.subject { subject = subject.map { min($0, s) } ?? s }
        expires = max(expires, fact.expires)
    }

    /// The merge of two states: the join of the lattice.
    public func merged(with other: NotificationState) -> NotificationState {
        var result = self
        for (a, s) in other.attempts { result.attempts[a] = result.attempts[a].map { max($0, s) } ?? s }
        for (d, at) in other.devices { result.devices[d] = max(result.devices[d] ?? .min, at) }
        if let s = other.subject { result.subject = result.subject.map { min($0, s) } ?? s }
        result.expires = max(result.expires, other.expires)
        return result
    }

    /// The highest attempt number any fact names (0 for none): a new reservation takes the next.
    public var attempt: UInt32 { attempts.keys.max() ?? 0 }

    /// The notification's status (nil without facts).
    public var status: FactStatus? {
        let statuses = Set(attempts.values.map(\.status))
        if statuses.contains(.sent) { return .sent }
        if statuses.contains(.inDoubt) { return .inDoubt }
        if statuses.contains(.reserved) { return .reserved }
        return statuses.isEmpty ? nil : .released
    }

    /// Whether some attempt is reserved with no outcome yet.
    public var hasUnresolvedAttempt: Bool { attempts.values.contains { $0.status == .reserved } }

    /// The latest instant the notification may have reached a device, for sliding windows; nil
    /// when it counts toward no cap (no facts, or every attempt released). An acknowledged or
    /// in-doubt attempt counts at its outcome's time (its deliveries were before); an
    /// unresolved one at its reservation + `sendLimit` (an owner never sends after that, see
    /// ``RulesPolicy/sendLimit``).
    public func countsUntil(sendLimit: Int64) -> Int64? {
        var latest: Int64?
        for state in attempts.values where state.status != .released {
            let at = state.status == .reserved ? state.at &+ sendLimit : state.at
            latest = max(latest ?? .min, at)
        }
        return latest
    }

    /// When FCM last acknowledged `push`, nil if never.
    public func acknowledged(_ push: DevicePushID) -> Int64? { devices[push] }
}
