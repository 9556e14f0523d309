/// A fact's bytes in the changelog (docs/rules-state.md), about 50–80 bytes where the design's
/// JSON took ~180.
///
/// Layout, version 1 (`varint`: unsigned LEB128, at most 10 bytes; `string`: a varint byte
/// count, then that many bytes of UTF-8; integers that may be negative are zigzag varints):
///
/// ```text
/// byte     version (1)
/// byte     kind: 1 reserved, 2 released, 3 in_doubt, 4 sent, 5 claim, 6 and 7 digest
///          (FactCodec+Digest.swift)
/// kind 1–4 (a notification):
///   16 bytes  N
///   varint    attempt
///   zigzag    at (ms since 1970)
///   varint    expires − at (ms, never negative)
///   string    owner
///   kind 1:   byte flags (1: user, 2: category), string user?, string category?,
///             string mapping, varint count, count × 8 bytes device keys
///   kind 4:   varint count, count × 8 bytes device push IDs
/// kind 5 (a claim):
///   zigzag    at
///   string    owner
///   varint    partition count
/// ```
///
/// Nothing may follow. Multi-byte fixed fields are big-endian. A damaged fact (truncated, an
/// unknown version or kind, a count past the limits, bytes after the end, text that is not
/// UTF-8) is a ``FactCodecError``, never a crash.
public enum FactCodec {
    public static let version: UInt8 = 1
    /// Longest owner, user, category or mapping accepted.
    public static let maxStringBytes = 1024
    /// Most devices a fact may list.
    public static let maxDevices = 4096

    public static func encode(_ fact: Fact) -> [UInt8] {
        var w = [version]
        switch fact {
        case .digest(let d):
            encodeDigest(d, into: &w)
        case .claim(let c):
            w.append(5)
            w.appendZigzag(c.at)
            w.appendString(c.owner)
            w.appendVarint(UInt64(UInt32(bitPattern: c.partitionCount)))
        case .notification(let f):
            w.append(f.status.rawValue)
            w += f.notification.bytes
            w.appendVarint(UInt64(f.attempt))
            w.appendZigzag(f.at)
            w.appendVarint(UInt64(bitPattern: max(0, f.expires &- f.at)))
            w.appendString(f.owner)
            switch f.status {
            case .reserved:
                let s = f.subject ?? CapSubject(user: nil, category: nil, mapping: "")
                w.append((s.user == nil ? 0 : 1) | (s.category == nil ? 0 : 2))
                if let user = s.user { w.appendString(user) }
                if let category = s.category { w.appendString(category) }
                w.appendString(s.mapping)
                w.appendVarint(UInt64(s.devices.count))
                for d in s.devices { w += RuleHash.bytes(d.value) }
            case .sent:
                w.appendVarint(UInt64(f.devices.count))
                for d in f.devices { w += RuleHash.bytes(d.value) }
            case .released, .inDoubt:
                break
            }
        }
        return w
    }

    /// - Throws: ``FactCodecError`` for bytes that are not a whole fact of a known version.
    public static func decode(_ bytes: some Collection<UInt8>) throws(FactCodecError) -> Fact {
        var r = FactReader(Array(bytes))
        let v = try r.byte()
        guard v == version else { throw FactCodecError("unknown fact version \(v)") }
        let kind = try r.byte()
        let fact: Fact
        if kind == 5 {
            let at = try r.zigzag()
            let owner = try r.string()
            let count = try r.varint()
            guard count <= UInt64(Int32.max) else { throw FactCodecError("partition count \(count) out of range") }
            fact = .claim(Claim(at: at, owner: owner, partitionCount: Int32(count)))
        } else if kind == 6 || kind == 7 {
            fact = .digest(try decodeDigest(kind: kind, &r))
        } else if let status = FactStatus(rawValue: kind) {
            fact = .notification(try notification(status, &r))
        } else {
            throw FactCodecError("unknown fact kind \(kind)")
        }
        guard r.atEnd else { throw FactCodecError("\(r.remaining) bytes after the fact") }
        return fact
    }

    private static func notification(_ status: FactStatus, _ r: inout FactReader) throws(FactCodecError) -> NotificationFact {
        let n = NotificationID(high: try r.fixed64(), low: try r.fixed64())
        let attempt = try r.varint()
        guard attempt <= UInt64(UInt32.max) else { throw FactCodecError("attempt \(attempt) out of range") }
        let at = try r.zigzag()
        let lifetime = try r.varint()
        let (expires, overflow) = at.addingReportingOverflow(Int64(bitPattern: lifetime))
        guard lifetime <= UInt64(Int64.max), !overflow else { throw FactCodecError("expiry out of range") }
        let owner = try r.string()
        var subject: CapSubject?
        var devices: [DevicePushID] = []
        switch status {
        case .reserved:
            let flags = try r.byte()
            guard flags & ~3 == 0 else { throw FactCodecError("unknown flags \(flags)") }
            let user = flags & 1 != 0 ? try r.string() : nil
            let category = flags & 2 != 0 ? try r.string() : nil
            let mapping = try r.string()
            let keys = try r.list { (r: inout FactReader) throws(FactCodecError) in DeviceKey(try r.fixed64()) }
            subject = CapSubject(user: user, category: category, mapping: mapping, devices: keys)
        case .sent:
            devices = try r.list { (r: inout FactReader) throws(FactCodecError) in DevicePushID(try r.fixed64()) }
        case .released, .inDoubt:
            break
        }
        return NotificationFact(
            notification: n, status: status, attempt: UInt32(attempt), at: at, expires: expires, owner: owner, subject: subject,
            devices: devices)
    }
}

/// Why bytes are not a fact.
public struct FactCodecError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { "damaged rules fact: \(message)" }
}

extension [UInt8] {
    mutating func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        append(UInt8(v))
    }

    mutating func appendZigzag(_ value: Int64) {
        appendVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
    }

    /// A string past ``FactCodec/maxStringBytes`` is cut at a character boundary (an ID that
    /// long is not one pushbridge's inputs allow; the fact stays decodable).
    mutating func appendString(_ s: String) {
        var text = Substring(s)
        while text.utf8.count > FactCodec.maxStringBytes { text = text.dropLast() }
        appendVarint(UInt64(text.utf8.count))
        self += text.utf8
    }
}

struct FactReader {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }
    var remaining: Int { bytes.count - index }

    mutating func byte() throws(FactCodecError) -> UInt8 {
        guard index < bytes.count else { throw FactCodecError("truncated") }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func fixed64() throws(FactCodecError) -> UInt64 {
        guard remaining >= 8 else { throw FactCodecError("truncated") }
        defer { index += 8 }
        return RuleHash.uint64(bytes, at: index)
    }

    mutating func varint() throws(FactCodecError) -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 70, by: 7) {
            let b = try byte()
            guard shift < 63 || b <= 1 else { throw FactCodecError("varint overflows 64 bits") }
            value |= UInt64(b & 0x7f) << UInt64(shift)
            if b & 0x80 == 0 { return value }
        }
        throw FactCodecError("varint longer than 10 bytes")
    }

    mutating func zigzag() throws(FactCodecError) -> Int64 {
        let v = try varint()
        return Int64(bitPattern: v >> 1) ^ -Int64(bitPattern: v & 1)
    }

    mutating func string() throws(FactCodecError) -> String {
        let count = try varint()
        guard count <= UInt64(FactCodec.maxStringBytes) else { throw FactCodecError("string of \(count) bytes") }
        guard remaining >= Int(count) else { throw FactCodecError("truncated") }
        let slice = bytes[index..<index + Int(count)]
        index += Int(count)
        guard let s = String(validating: slice, as: UTF8.self) else { throw FactCodecError("text that is not UTF-8") }
        return s
    }

    mutating func list<T>(_ element: (inout FactReader) throws(FactCodecError) -> T) throws(FactCodecError) -> [T] {
        let count = try varint()
        guard count <= UInt64(FactCodec.maxDevices) else { throw FactCodecError("\(count) devices") }
        guard remaining >= Int(count) * 8 else { throw FactCodecError("truncated") }
        var result: [T] = []
        result.reserveCapacity(Int(count))
        for _ in 0..<count { result.append(try element(&self)) }
        return result
    }
}
