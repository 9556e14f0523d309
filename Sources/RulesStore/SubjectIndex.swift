import Rules

/// Notifications by the users and devices of their subjects, so that a cap query looks at those
/// of its key's user or device only (a cap has `user` or `device` in its `by`, design §3). Pure;
/// the overlay of pending facts (``RulesOverlay``) and the store in memory (``MemoryRulesStore``)
/// each keep one.
struct SubjectIndex: Sendable {
    private var byUser: [String: Set<NotificationID>] = [:]
    private var byDevice: [DeviceKey: Set<NotificationID>] = [:]

    /// Files `n` under `subject`'s user and devices.
    mutating func insert(_ n: NotificationID, under subject: CapSubject) {
        if let user = subject.user { byUser[user, default: []].insert(n) }
        for device in subject.devices { byDevice[device, default: []].insert(n) }
    }

    /// Takes `n` from under `subject`'s user and devices.
    mutating func remove(_ n: NotificationID, under subject: CapSubject) {
        if let user = subject.user { Self.remove(n, from: &byUser, at: user) }
        for device in subject.devices { Self.remove(n, from: &byDevice, at: device) }
    }

    private static func remove<K: Hashable>(_ n: NotificationID, from index: inout [K: Set<NotificationID>], at key: K) {
        if index[key]?.remove(n) != nil, index[key]?.isEmpty == true { index[key] = nil }
    }

    /// The notifications filed under `key`'s device, else under its user; nil for a key by
    /// neither (every notification may count).
    func candidates(for key: CapKey) -> Set<NotificationID>? {
        if let device = key.device { return byDevice[device] ?? [] }
        if case .some(.some(let user)) = key.user { return byUser[user] ?? [] }
        return nil
    }
}
