/// Who one message goes to, as the client needs to know it: a device throttled by FCM is backed
/// off on its own, and a topic on its own, while sends to everyone else go on.
public struct SendTarget: Hashable, Sendable, CustomStringConvertible {
    /// The v1 `Message` target fields (exactly one per message).
    public enum Kind: String, Sendable, CaseIterable {
        /// A Firebase Installation ID (`fid`), FCM's device identifier since 2026.
        case fid
        /// A registration token (`token`; deprecated by FCM in favour of `fid`, still accepted).
        case token
        case topic
        case condition
    }

    public var kind: Kind
    public var value: String

    public init(_ kind: Kind, _ value: String) {
        self.kind = kind
        self.value = value
    }

    /// One app installation (a token or an FID), as opposed to a topic or a condition.
    public var isDevice: Bool { kind == .fid || kind == .token }

    /// `token …dFQ3P1`: the kind and, for devices, only the last 6 characters (identifiers are
    /// personal data and stay out of logs).
    public var description: String {
        isDevice ? "\(kind.rawValue) …\(value.suffix(6))" : "\(kind.rawValue) \(value)"
    }
}
