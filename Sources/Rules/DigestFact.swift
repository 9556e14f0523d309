/// What the owner of a state partition learns about a digest window (issue 56 design §4.3):
/// an event that joined it, or that it was closed. Written to the partition's changelog beside
/// the notification facts; facts of one window merge as a lattice (``DigestBook``), in any
/// order, with any duplicates.
public enum DigestFact: Hashable, Sendable {
    case member(DigestMember)
    case closed(DigestClosed)

    public var window: NotificationID {
        switch self {
        case .member(let m): m.window
        case .closed(let c): c.window
        }
    }
}

extension NotificationID {
    /// A digest window's identity, also the notification its closing push is: the key (user
    /// and `by` values), the mapping, and the instant its first event opened it (ms).
    public init(digestKey key: String, mapping: String, opened: Int64) {
        var hasher = RuleHash.Hasher(label: "pushbridge.digest.v1")
        hasher.append(key)
        hasher.append(mapping)
        hasher.append(String(opened))
        let (high, low) = hasher.first128()
        self.init(high: high, low: low)
    }
}

/// An event that joined a digest window, with what the window's push is rendered from.
public struct DigestMember: Hashable, Sendable {
    public var window: NotificationID
    /// The key: the user, then each `by` value (``Mapping/Digest/key(user:data:)``).
    public var key: String
    /// The mapping (event type).
    public var mapping: String
    /// When the window was opened and when it ends (ms since 1970).
    public var opened: Int64
    public var end: Int64
    public var eventID: String
    /// When it joined (ms since 1970).
    public var at: Int64
    /// Its actor's name (`actors:`), if any.
    public var actor: String?
    /// It was sent at once (`first: now`): not counted in the digest.
    public var sentAtOnce: Bool
    /// The source record, to render the window's push from its last member.
    public var event: DigestEvent
    /// Who wrote it (member ID, generation, nonce), as for notification facts.
    public var owner: String

    public init(
        window: NotificationID, key: String, mapping: String, opened: Int64, end: Int64, eventID: String, at: Int64, actor: String?,
        sentAtOnce: Bool, event: DigestEvent, owner: String
    ) {
        (self.window, self.key, self.mapping, self.opened, self.end, self.eventID) = (window, key, mapping, opened, end, eventID)
        (self.at, self.actor, self.sentAtOnce, self.event, self.owner) = (at, actor, sentAtOnce, event, owner)
    }
}

/// A source record as a digest member keeps it: where it was read and its bytes.
public struct DigestEvent: Hashable, Sendable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var timestamp: Int64?
    public var key: [UInt8]?
    public var value: [UInt8]
    public var headers: [DigestHeader]

    public init(topic: String, partition: Int32, offset: Int64, timestamp: Int64?, key: [UInt8]?, value: [UInt8], headers: [DigestHeader]) {
        (self.topic, self.partition, self.offset, self.timestamp) = (topic, partition, offset, timestamp)
        (self.key, self.value, self.headers) = (key, value, headers)
    }
}

public struct DigestHeader: Hashable, Sendable {
    public var name: String
    public var value: [UInt8]?

    public init(name: String, value: [UInt8]?) { (self.name, self.value) = (name, value) }
}

/// A digest window closed: its push sent (or none due), with the members it accounted for, so
/// an event read again later is known to have been digested.
public struct DigestClosed: Hashable, Sendable {
    public var window: NotificationID
    public var at: Int64
    /// The event IDs of the members when it closed, sorted.
    public var members: [String]
    public var owner: String

    public init(window: NotificationID, at: Int64, members: [String], owner: String) {
        (self.window, self.at, self.members, self.owner) = (window, at, members.sorted(), owner)
    }
}
