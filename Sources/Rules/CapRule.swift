/// A mapping's `cap: {max, per, by}`: at most `max` notifications FCM acknowledged (or in
/// doubt) per sliding `per` per key `by` (docs/rules.md, design §3). A cap counts
/// notifications, not messages: one event reaching a user's two phones is one notification for
/// `[user, …]` keys and one per device for `[device, …]` keys.
public struct CapRule: Hashable, Sendable {
    public enum Dimension: String, Hashable, Sendable, CaseIterable {
        case user, category, mapping, device
    }

    public var max: Int
    /// The window, in milliseconds.
    public var per: Int64
    public var by: Set<Dimension>

    public init(max: Int, per: Int64, by: Set<Dimension>) {
        self.max = max
        self.per = per
        self.by = by
    }

    /// The keys `subject` counts toward: one, or one per device for a cap by `device`. Caps
    /// with the same key share their counts across mappings.
    public func keys(of subject: CapSubject) -> [CapKey] {
        let base = CapKey(
            user: by.contains(.user) ? .some(subject.user) : nil,
            category: by.contains(.category) ? .some(subject.category) : nil,
            mapping: by.contains(.mapping) ? subject.mapping : nil,
            device: nil)
        guard by.contains(.device) else { return [base] }
        return subject.devices.map { device in
            var key = base
            key.device = device
            return key
        }
    }
}

/// One counter of caps: the values of the dimensions a cap is keyed by (nil: not keyed by it;
/// `.some(nil)`: keyed by it, and the notification has none, e.g. no category).
public struct CapKey: Hashable, Sendable {
    public var user: String??
    public var category: String??
    public var mapping: String?
    public var device: DeviceKey?

    public init(user: String??, category: String??, mapping: String?, device: DeviceKey?) {
        self.user = user
        self.category = category
        self.mapping = mapping
        self.device = device
    }

    /// Whether a notification that is `subject` counts toward this key.
    public func matches(_ subject: CapSubject) -> Bool {
        if let user, user != subject.user { return false }
        if let category, category != subject.category { return false }
        if let mapping, mapping != subject.mapping { return false }
        if let device, !subject.devices.contains(device) { return false }
        return true
    }
}

/// Constants of the exactness protocol the owners and the evaluation share.
public struct RulesPolicy: Hashable, Sendable {
    /// An owner never sends a notification later than this after its reservation (the FCM retry
    /// budget fits in it); an unresolved reservation therefore counts until `at + sendLimit`.
    public var sendLimit: Int64

    public init(sendLimit: Int64) { self.sendLimit = sendLimit }
}
