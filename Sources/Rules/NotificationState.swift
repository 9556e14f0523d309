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
    /// Its attempts, ascending by number: each with its greatest status and that status's
    /// latest time. Sorted arrays rather than dictionaries: a notification has one or two
    /// attempts and pushes, and the two dictionaries cost the store in memory 86 bytes more a
    /// notification (674 against 588, `bench.sh rules-store`) and more CPU a merge.
    public private(set) var attempts: [Attempt] = []
    /// Acknowledged device pushes, ascending, each with its latest acknowledgement.
    public private(set) var devices: [Acknowledgement] = []
    /// What the notification is (from its reservations; the least if they disagree).
    public internal(set) var subject: CapSubject?
    /// The latest expiry of its facts.
    public internal(set) var expires: Int64 = .min

    public struct AttemptState: Hashable, Sendable, Comparable {
        public var status: FactStatus
        public var at: Int64

        public static func < (a: AttemptState, b: AttemptState) -> Bool { (a.status, a.at) < (b.status, b.at) }
    }

    /// One attempt: its number and its merged state.
    public struct Attempt: Hashable, Sendable {
        public var number: UInt32
        public var state: AttemptState
    }

    /// One acknowledged device push and its latest acknowledgement (ms).
    public struct Acknowledgement: Hashable, Sendable {
        public var push: DevicePushID
        public var at: Int64
    }

    public init() {}

    public init(_ facts: some Sequence<NotificationFact>) {
        for fact in facts { apply(fact) }
    }

    /// Merges one fact in (of this notification; the caller keys states by N).
    public mutating func apply(_ fact: NotificationFact) {
        merge(attempt: fact.attempt, AttemptState(status: fact.status, at: fact.at))
        for d in fact.devices { merge(push: d, at: fact.at) }
        if let s = fact.subject { subject = subject.map { min($0, s) } ?? s }
        expires = max(expires, fact.expires)
    }

    /// The merge of two states: the join of the lattice.
    public func merged(with other: NotificationState) -> NotificationState {
        var result = self
        for a in other.attempts { result.merge(attempt: a.number, a.state) }
        for d in other.devices { result.merge(push: d.push, at: d.at) }
        if let s = other.subject { result.subject = result.subject.map { min($0, s) } ?? s }
        result.expires = max(result.expires, other.expires)
        return result
    }

    /// Attempt `number` at the greater of its state and `state`.
    mutating func merge(attempt number: UInt32, _ state: AttemptState) {
        // Facts arrive mostly in order: an attempt after the last one is appended.
        let i = attempts.last.map { $0.number < number } ?? true ? attempts.endIndex : attempts.firstIndex { $0.number >= number }!
        if i < attempts.endIndex, attempts[i].number == number {
            attempts[i].state = max(attempts[i].state, state)
        } else {
            attempts.insert(Attempt(number: number, state: state), at: i)
        }
    }

    /// `push` acknowledged at the later of its time and `at`.
    mutating func merge(push: DevicePushID, at: Int64) {
        let i = devices.last.map { $0.push < push } ?? true ? devices.endIndex : devices.firstIndex { $0.push >= push }!
        if i < devices.endIndex, devices[i].push == push {
            devices[i].at = max(devices[i].at, at)
        } else {
            devices.insert(Acknowledgement(push: push, at: at), at: i)
        }
    }

    /// The state of attempt `number`, nil if no fact names it.
    public func attempt(_ number: UInt32) -> AttemptState? { attempts.first { $0.number == number }?.state }

    /// The highest attempt number any fact names (0 for none): a new reservation takes the next.
    public var attempt: UInt32 { attempts.last?.number ?? 0 }

    /// The notification's status (nil without facts).
    public var status: FactStatus? {
        guard let first = attempts.first else { return nil }
        var greatest = first.state.status
        for a in attempts.dropFirst() where Self.rank(a.state.status) > Self.rank(greatest) { greatest = a.state.status }
        return greatest
    }

    /// `sent` over `in_doubt` over `reserved` over `released`: which status the notification's is.
    private static func rank(_ status: FactStatus) -> Int {
        switch status {
        case .released: 0
        case .reserved: 1
        case .inDoubt: 2
        case .sent: 3
        }
    }

    /// Whether some attempt is reserved with no outcome yet.
    public var hasUnresolvedAttempt: Bool { attempts.contains { $0.state.status == .reserved } }

    /// The latest instant the notification may have reached a device, for sliding windows; nil
    /// when it counts toward no cap (no facts, or every attempt released). An acknowledged or
    /// in-doubt attempt counts at its outcome's time (its deliveries were before); an
    /// unresolved one at its reservation + `sendLimit` (an owner never sends after that, see
    /// ``RulesPolicy/sendLimit``).
    public func countsUntil(sendLimit: Int64) -> Int64? {
        var latest: Int64?
        for a in attempts where a.state.status != .released {
            let at = a.state.status == .reserved ? a.state.at &+ sendLimit : a.state.at
            latest = max(latest ?? .min, at)
        }
        return latest
    }

    /// When FCM last acknowledged `push`, nil if never.
    public func acknowledged(_ push: DevicePushID) -> Int64? { devices.first { $0.push == push }?.at }
}
