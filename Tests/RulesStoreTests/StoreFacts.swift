import Rules
import TestSupport

/// Random facts about a few notifications of a few users, so that they merge (several facts per
/// notification) and cap keys match several of them; each notification lives in one partition.
struct StoreFacts {
    var rng: SplitMix64
    let notifications: [NotificationID]
    let subjects: [NotificationID: CapSubject]
    static let users: [String?] = ["u0", "u1", "u2", nil]
    static let categories: [String?] = ["social", nil]
    static let mappings = ["chat", "offer"]
    static let devices = (0..<3).map { DeviceKey(UInt64($0) &* 0x9E37_79B9_7F4A_7C15) }
    static let base: Int64 = 1_800_000_000_000

    init(seed: UInt64, notifications count: Int = 12) {
        rng = SplitMix64(seed: seed)
        notifications = (0..<count).map { NotificationID(eventID: "e\($0)", mapping: "m", subject: "s\(seed)") }
        var subjects: [NotificationID: CapSubject] = [:]
        var r = SplitMix64(seed: seed ^ 0xABCD)
        for n in notifications {
            subjects[n] = CapSubject(
                user: Self.users[Int(r.next() % 4)], category: Self.categories[Int(r.next() % 2)], mapping: Self.mappings[Int(r.next() % 2)],
                devices: Self.devices.filter { _ in r.next() % 2 == 0 })
        }
        self.subjects = subjects
    }

    mutating func choose(_ count: Int) -> Int { Int(rng.next() % UInt64(count)) }

    /// The partition a notification's facts go to (a subject lives in one).
    static func partition(of n: NotificationID) -> Int32 { Int32(n.low % 3) }

    /// The pushes `n`'s `sent` facts may acknowledge (two targets).
    static func pushes(of n: NotificationID) -> [DevicePushID] { ["fid:a", "fid:b"].map { DevicePushID(notification: n, target: $0) } }

    mutating func fact() -> NotificationFact {
        let n = notifications[choose(notifications.count)]
        let status = FactStatus.allCases[choose(4)]
        let at = Self.base + Int64(choose(10_000))
        // Now and then a reservation with another subject: the merge keeps the least.
        var subject = subjects[n]
        if choose(20) == 0 { subject = CapSubject(user: "u0", category: nil, mapping: "chat") }
        let pushes = Self.pushes(of: n).filter { _ in choose(2) == 0 }
        return NotificationFact(
            notification: n, status: status, attempt: UInt32(1 + choose(3)), at: at, expires: at + Int64(choose(20_000)),
            owner: "w-\(choose(2))", subject: subject, devices: pushes)
    }

    /// Every cap key the subjects could be counted under: each combination of dimensions over
    /// each subject (and a few no subject has).
    func keys() -> [CapKey] {
        var keys: Set<CapKey> = [CapKey(user: .some("nobody"), category: nil, mapping: nil, device: nil)]
        let dimensions = CapRule.Dimension.allCases
        for mask in 0..<(1 << dimensions.count) {
            let cap = CapRule(max: 1, per: 1, by: Set(dimensions.enumerated().filter { mask & (1 << $0.offset) != 0 }.map(\.element)))
            for subject in subjects.values { keys.formUnion(cap.keys(of: subject)) }
        }
        return Array(keys)
    }
}
