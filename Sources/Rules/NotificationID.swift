import Crypto

/// A notification's identity: `N = H(event ID, mapping, subject)`, the first 16 bytes of a
/// SHA-256 over the three fields, each prefixed with its length (so `("ab", "c")` and
/// `("a", "bc")` differ) after a domain label. The same event of the same mapping for the same
/// subject is one notification, however often it is read (replays, producer duplicates,
/// redelivery after a crash): its facts merge, and a cap counts it once.
///
/// The key of the changelog's records (docs/rules-state.md).
public struct NotificationID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The 16 bytes, big-endian in two halves.
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// N of an event of `mapping` (the event type) for `subject` (the user, or the target value
    /// of a mapping without a user; docs/rules-state.md).
    public init(eventID: String, mapping: String, subject: String) {
        var hasher = RuleHash.Hasher(label: "pushbridge.notification.v1")
        hasher.append(eventID)
        hasher.append(mapping)
        hasher.append(subject)
        let (high, low) = hasher.first128()
        self.init(high: high, low: low)
    }

    /// The 16 bytes as the changelog's record key carries them.
    public var bytes: [UInt8] { RuleHash.bytes(high) + RuleHash.bytes(low) }

    public static func < (a: NotificationID, b: NotificationID) -> Bool { (a.high, a.low) < (b.high, b.low) }

    public var description: String { RuleHash.hex(high) + RuleHash.hex(low) }
}

/// One device push of a notification: the first 8 bytes of SHA-256(N ‖ target). What a `sent`
/// fact lists as acknowledged and dedup looks up.
public struct DevicePushID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let value: UInt64

    public init(_ value: UInt64) { self.value = value }

    /// The push of `notification` to `target` (the FCM target's kind and value, `fid:…`,
    /// `token:…`, so a fid and a token with the same text differ).
    public init(notification: NotificationID, target: String) {
        var hasher = RuleHash.Hasher(label: "pushbridge.device-push.v1")
        hasher.append(hexOf: notification)
        hasher.append(target)
        value = hasher.first64()
    }

    public static func < (a: DevicePushID, b: DevicePushID) -> Bool { a.value < b.value }

    public var description: String { RuleHash.hex(value) }
}

/// A device as a `[device]` cap key names it: the first 8 bytes of SHA-256 of its target
/// (`fid:…`), so a reservation carries 8 bytes per device instead of a 160-byte token.
public struct DeviceKey: Hashable, Sendable, Comparable {
    public let value: UInt64

    public init(_ value: UInt64) { self.value = value }

    public init(target: String) {
        var hasher = RuleHash.Hasher(label: "pushbridge.device.v1")
        hasher.append(target)
        value = hasher.first64()
    }

    public static func < (a: DeviceKey, b: DeviceKey) -> Bool { a.value < b.value }
}

enum RuleHash {
    /// SHA-256 over a label and fields, each prefixed with its length as 8 bytes big-endian,
    /// fed without intermediate arrays (an ID is computed several times per capped push).
    struct Hasher {
        var sha = SHA256()

        init(label: String) { append(label) }

        mutating func append(_ field: String) {
            var field = field
            field.withUTF8 { utf8 in
                appendLength(utf8.count)
                sha.update(bufferPointer: UnsafeRawBufferPointer(utf8))
            }
        }

        /// `n`'s ``NotificationID/description`` (32 lowercase hex digits) as a field.
        mutating func append(hexOf n: NotificationID) {
            appendLength(32)
            var digits = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            withUnsafeMutableBytes(of: &digits) { out in
                for i in 0..<32 {
                    let value = i < 16 ? n.high : n.low
                    let nibble = UInt8(truncatingIfNeeded: value >> (60 - 4 * UInt64(i % 16))) & 0xF
                    out[i] = nibble < 10 ? 0x30 + nibble : 0x57 + nibble
                }
                sha.update(bufferPointer: UnsafeRawBufferPointer(out))
            }
        }

        private mutating func appendLength(_ count: Int) {
            var length = UInt64(count).bigEndian
            withUnsafeBytes(of: &length) { sha.update(bufferPointer: $0) }
        }

        /// The digest's first 8 bytes, big-endian.
        func first64() -> UInt64 { first128().high }

        /// The digest's first 16 bytes, big-endian in two halves.
        func first128() -> (high: UInt64, low: UInt64) {
            sha.finalize().withUnsafeBytes { d in
                var high: UInt64 = 0
                var low: UInt64 = 0
                for i in 0..<8 {
                    high = high << 8 | UInt64(d[i])
                    low = low << 8 | UInt64(d[8 + i])
                }
                return (high, low)
            }
        }
    }

    static func uint64(_ bytes: [UInt8], at start: Int) -> UInt64 {
        bytes[start..<start + 8].reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func bytes(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
