/// Who one FCM HTTP v1 message goes to: the `Message` target field (exactly one per message)
/// and its value. The mapping core renders it; the FCM client backs off a device throttled by
/// FCM on its own, and a topic on its own, while sends to everyone else go on.
public struct MessageTarget: Hashable, Sendable, CustomStringConvertible {
    /// The v1 `Message` target fields; the raw value is the field's name.
    public enum Kind: String, Sendable, CaseIterable {
        /// A Firebase Installation ID (`fid`): FCM marks `token` deprecated in its favour (v1 reference, 2026).
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

    /// One app installation (an FID or a token), as opposed to a topic or a condition.
    public var isDevice: Bool { kind == .fid || kind == .token }

    /// `token …dFQ3P1`: the kind and, for devices, only the last 6 characters (identifiers are
    /// personal data and stay out of logs).
    public var description: String {
        isDevice ? "\(kind.rawValue) …\(value.suffix(6))" : "\(kind.rawValue) \(value)"
    }
}
