/// One record of the rules changelog (docs/rules-state.md): what an owner of a state partition
/// learned about a notification, or its claim of the partition.
///
/// Facts merge as a lattice (``NotificationState``): any order, any duplicates give the same
/// state, so the changelog's producer need not be idempotent and restore need not be ordered.
public enum Fact: Hashable, Sendable {
    case notification(NotificationFact)
    case claim(Claim)
    /// A digest window's member or close (``DigestBook``): not a notification's state.
    case digest(DigestFact)
}

/// Where an attempt to push a notification stands, in the order a merge keeps the greatest.
public enum FactStatus: UInt8, Hashable, Sendable, Comparable, CaseIterable {
    /// Reserved before a send: counts toward caps until its outcome is known.
    case reserved = 1
    /// Every send was definitively refused (UNREGISTERED, INVALID_ARGUMENT, SENDER_ID_MISMATCH,
    /// THIRD_PARTY_AUTH_ERROR; never after a 5xx or a timeout): nothing was delivered.
    case released = 2
    /// No acknowledgement, but not every answer was a definitive refusal: may have been delivered.
    case inDoubt = 3
    /// FCM acknowledged the device pushes the fact lists.
    case sent = 4

    public static func < (a: FactStatus, b: FactStatus) -> Bool { a.rawValue < b.rawValue }
}

/// What a notification is, for caps: its user, category, mapping and the devices it goes to.
/// Carried by `reserved` facts; a cap key (``CapKey``) matches it or not.
public struct CapSubject: Hashable, Sendable, Comparable {
    public var user: String?
    public var category: String?
    /// The mapping (event type).
    public var mapping: String
    /// The devices the notification goes to, sorted, for `[device, …]` caps.
    public var devices: [DeviceKey]

    public init(user: String?, category: String?, mapping: String, devices: [DeviceKey] = []) {
        self.user = user
        self.category = category
        self.mapping = mapping
        self.devices = devices.sorted()
    }

    /// A total order, so a merge of two different subjects for one notification (which the
    /// owners never write) still picks the same one whatever the order.
    public static func < (a: CapSubject, b: CapSubject) -> Bool {
        if a.user != b.user { return less(a.user, b.user) }
        if a.category != b.category { return less(a.category, b.category) }
        if a.mapping != b.mapping { return a.mapping < b.mapping }
        return a.devices.lexicographicallyPrecedes(b.devices)
    }

    /// None before any string.
    private static func less(_ a: String?, _ b: String?) -> Bool {
        guard let b else { return false }
        guard let a else { return true }
        return a < b
    }
}

/// A fact about notification `notification`, attempt `attempt`.
public struct NotificationFact: Hashable, Sendable {
    public var notification: NotificationID
    public var status: FactStatus
    /// The attempt (reservation) number its owner gave it: the highest it knew for N, plus one
    /// for a reservation; the reservation's number for an outcome.
    public var attempt: UInt32
    /// Milliseconds since 1970: when it was reserved, or when the outcome was known (for `sent`,
    /// FCM's acknowledgement).
    public var at: Int64
    /// When the fact stops mattering (`at` + the longest window of its mapping); a store drops it then.
    public var expires: Int64
    /// Who wrote it: member ID, group generation and a random nonce.
    public var owner: String
    /// What the notification is (reserved facts only).
    public var subject: CapSubject?
    /// The device pushes FCM acknowledged (sent facts only).
    public var devices: [DevicePushID]

    public init(
        notification: NotificationID, status: FactStatus, attempt: UInt32, at: Int64, expires: Int64, owner: String,
        subject: CapSubject? = nil, devices: [DevicePushID] = []
    ) {
        self.notification = notification
        self.status = status
        self.attempt = attempt
        self.at = at
        self.expires = expires
        self.owner = owner
        self.subject = status == .reserved ? subject : nil
        self.devices = status == .sent ? devices.sorted() : []
    }
}

/// An owner's claim of a state partition: it restores the changelog up to this record, and an
/// owner that reads a foreign claim after its own is fenced (docs/rules-state.md).
public struct Claim: Hashable, Sendable {
    public var at: Int64
    public var owner: String
    /// The partition count of the topics when it was claimed; another count refuses to start.
    public var partitionCount: Int32

    public init(at: Int64, owner: String, partitionCount: Int32) {
        self.at = at
        self.owner = owner
        self.partitionCount = partitionCount
    }
}
