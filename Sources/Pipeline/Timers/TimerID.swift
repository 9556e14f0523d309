import Crypto
import Kafka

/// A timer's identity (issue 56 design §1.1): the first 16 bytes of SHA-256 over the source
/// record's coordinates, the push's name and the reason, written as 32 lowercase hex digits.
/// The same source event deferred again (a crash before its commit, a replay that re-arms) gets
/// the same ID, so its copies can be recognised in outcome records and `timers list`.
public struct TimerID: Sendable, Hashable, CustomStringConvertible {
    /// 32 lowercase hex digits.
    public let hex: String

    /// Parses 32 hex digits (either case; kept lowercase), or nil.
    public init?(hex: String) {
        self.init(hexDigits: hex.utf8)
    }

    /// Parses 32 hex digits given as UTF-8 (either case; kept lowercase), or nil.
    public init?(hexDigits: some Collection<UInt8>) {
        guard hexDigits.count == 32, hexDigits.allSatisfy({ Self.nibble($0) != nil }) else { return nil }
        hex = String(decoding: hexDigits, as: UTF8.self).lowercased()
    }

    /// The ID of the timer `reason` sets for `push` (nil: a mapping without `pushes:`) of the
    /// record at `topic`/`partition`/`offset`.
    public init(topic: String, partition: Int32, offset: Int64, push: String?, reason: String) {
        // Length-prefixed fields: no two different inputs give the same bytes.
        var bytes: [UInt8] = []
        for field in [topic, String(partition), String(offset), push ?? "", reason] {
            bytes.append(contentsOf: String(field.utf8.count).utf8)
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: field.utf8)
        }
        bytes.append(push == nil ? 0 : 1)
        let digest = SHA256.hash(data: bytes)
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for byte in digest.prefix(16) {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xf)])
        }
        hex = String(decoding: out, as: UTF8.self)
    }

    public var description: String { hex }

    static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
