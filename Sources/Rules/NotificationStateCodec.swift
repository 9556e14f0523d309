/// A merged ``NotificationState`` as bytes, for a store that keeps one row per notification
/// (the rules store's `state` column). The same primitives as ``FactCodec``.
///
/// Layout, version 1:
///
/// ```text
/// byte     version (1)
/// varint   attempt count, then per attempt (ascending): varint attempt, byte status, zigzag at
/// varint   device push count, then per push (ascending): 8 bytes ID, zigzag at
/// byte     flags: 1 subject, 2 user, 4 category
///   with a subject: string user?, string category?, string mapping, varint count, count × 8 bytes device keys
/// zigzag   expires
/// ```
///
/// Nothing may follow. A damaged state (truncated, an unknown version, status or flag, bytes
/// after the end, text that is not UTF-8) is a ``FactCodecError``, never a crash.
public enum NotificationStateCodec {
    public static let version: UInt8 = 1
    /// Most attempts a state may list (an owner makes one per send; thousands mean a bug).
    public static let maxAttempts = 65_536

    public static func encode(_ state: NotificationState) -> [UInt8] {
        var w = [version]
        w.appendVarint(UInt64(state.attempts.count))
        for a in state.attempts {
            w.appendVarint(UInt64(a.number))
            w.append(a.state.status.rawValue)
            w.appendZigzag(a.state.at)
        }
        w.appendVarint(UInt64(state.devices.count))
        for d in state.devices {
            w += RuleHash.bytes(d.push.value)
            w.appendZigzag(d.at)
        }
        if let s = state.subject {
            w.append(1 | (s.user == nil ? 0 : 2) | (s.category == nil ? 0 : 4))
            if let user = s.user { w.appendString(user) }
            if let category = s.category { w.appendString(category) }
            w.appendString(s.mapping)
            w.appendVarint(UInt64(s.devices.count))
            for d in s.devices { w += RuleHash.bytes(d.value) }
        } else {
            w.append(0)
        }
        w.appendZigzag(state.expires)
        return w
    }

    /// - Throws: ``FactCodecError`` for bytes that are not a whole state of a known version.
    public static func decode(_ bytes: some Collection<UInt8>) throws(FactCodecError) -> NotificationState {
        var r = FactReader(Array(bytes))
        let v = try r.byte()
        guard v == version else { throw FactCodecError("unknown state version \(v)") }
        var state = NotificationState()
        let attempts = try r.varint()
        guard attempts <= UInt64(maxAttempts) else { throw FactCodecError("\(attempts) attempts") }
        for _ in 0..<attempts {
            let attempt = try r.varint()
            guard attempt <= UInt64(UInt32.max) else { throw FactCodecError("attempt \(attempt) out of range") }
            let raw = try r.byte()
            guard let status = FactStatus(rawValue: raw) else { throw FactCodecError("unknown status \(raw)") }
            state.merge(attempt: UInt32(attempt), NotificationState.AttemptState(status: status, at: try r.zigzag()))
        }
        let pushes = try r.varint()
        guard pushes <= UInt64(FactCodec.maxDevices) else { throw FactCodecError("\(pushes) device pushes") }
        for _ in 0..<pushes {
            let push = DevicePushID(try r.fixed64())
            state.merge(push: push, at: try r.zigzag())
        }
        let flags = try r.byte()
        guard flags & ~7 == 0, flags & 1 != 0 || flags == 0 else { throw FactCodecError("unknown flags \(flags)") }
        if flags & 1 != 0 {
            let user = flags & 2 != 0 ? try r.string() : nil
            let category = flags & 4 != 0 ? try r.string() : nil
            let mapping = try r.string()
            let keys = try r.list { (r: inout FactReader) throws(FactCodecError) in DeviceKey(try r.fixed64()) }
            state.subject = CapSubject(user: user, category: category, mapping: mapping, devices: keys)
        }
        state.expires = try r.zigzag()
        guard r.atEnd else { throw FactCodecError("\(r.remaining) bytes after the state") }
        return state
    }
}
