/// One owner's notifications between their reservation and their outcome, and the events
/// waiting on them (design §5.5): a second push of a notification in flight waits for the
/// first's outcome; an event whose cap is full only with pushes in flight waits until one
/// resolves. A pure state machine: the engine acts on what it returns.
public struct InFlightTable: Sendable {
    /// Who waits (the engine's handle for an event).
    public typealias Waiter = UInt64

    public enum Wait: Hashable, Sendable {
        /// For the outcome of this notification (a duplicate of one in flight).
        case notification(NotificationID)
        /// For any of these notifications to resolve (a cap full only with pushes in flight).
        case anyOf(Set<NotificationID>)

        func involves(_ n: NotificationID) -> Bool {
            switch self {
            case .notification(let m): return m == n
            case .anyOf(let set): return set.contains(n)
            }
        }
    }

    private var flights: [NotificationID: [CapKey]] = [:]
    private var byKey: [CapKey: Set<NotificationID>] = [:]
    private var waiting: [(waiter: Waiter, wait: Wait)] = []

    public init() {}

    /// Starts `notification`, counting toward `keys`. False when it is already in flight: the
    /// caller waits for its outcome (`.notification`) instead.
    public mutating func begin(_ notification: NotificationID, keys: [CapKey]) -> Bool {
        guard flights[notification] == nil else { return false }
        flights[notification] = keys
        for key in keys { byKey[key, default: []].insert(notification) }
        return true
    }

    public func isInFlight(_ notification: NotificationID) -> Bool { flights[notification] != nil }

    /// The notifications in flight here that count toward `key`.
    public func notifications(countingToward key: CapKey) -> Set<NotificationID> { byKey[key] ?? [] }

    public var count: Int { flights.count }
    public var waiterCount: Int { waiting.count }

    /// Parks `waiter` until what it waits for resolves. A wait on nothing in flight returns it
    /// at once (it decides again now).
    public mutating func wait(_ waiter: Waiter, for wait: Wait) -> [Waiter] {
        let pending: Bool
        switch wait {
        case .notification(let n): pending = isInFlight(n)
        case .anyOf(let set): pending = set.contains { isInFlight($0) }
        }
        guard pending else { return [waiter] }
        waiting.append((waiter, wait))
        return []
    }

    /// `notification`'s outcome is recorded: it is no longer in flight. Returns the waiters
    /// that now decide again, in the order they began waiting: every one waiting for it
    /// (a cap's count, read again, says whether the freed or used slot lets them through).
    public mutating func finish(_ notification: NotificationID) -> [Waiter] {
        guard let keys = flights.removeValue(forKey: notification) else { return [] }
        for key in keys {
            byKey[key]?.remove(notification)
            if byKey[key]?.isEmpty == true { byKey[key] = nil }
        }
        let woken = waiting.filter { $0.wait.involves(notification) }.map(\.waiter)
        waiting.removeAll { $0.wait.involves(notification) }
        return woken
    }

    /// Forgets `waiter` (its event was revoked or cancelled).
    public mutating func cancel(_ waiter: Waiter) {
        waiting.removeAll { $0.waiter == waiter }
    }
}
