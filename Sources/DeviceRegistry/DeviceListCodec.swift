import Dates
import Preferences

/// The compact binary form of a user's devices and preferences, as the store keeps them (one
/// blob per user).
///
/// ```
/// version (byte), device count (varint), then per device:
///   flags (byte): bit 0 token (else fid), bits 1–2 platform (0 none, 1 android, 2 ios, 3 web),
///                 bit 3 app present, bit 4 labels present, bit 5 push-to-start tokens present,
///                 bit 6 a Live Activity token present, bit 7 muted categories present
///   id (varint length + UTF-8), [app (varint length + UTF-8)],
///   [label count (varint), then per label key and value (varint length + UTF-8 each)],
///   [push-to-start count (varint), then per token its type and the token (the same)],
///   [Live Activity token (varint length + UTF-8)],
///   [muted count (varint), then each category (varint length + UTF-8)]
/// version 3 only, after the devices: preference flags (byte): bit 0 time zone, bit 1 muted,
///   bit 2 quiet hours off, bit 3 a quiet hours window; [time zone (string)],
///   [muted count, then each category], [from, to (varints, minutes of the day)]
/// ```
/// Version 2 is a list with Live Activity tokens (bits 5 and 6), version 3 one with preferences
/// (bit 7, the trailer); each is written only when needed, so a list without either is still
/// version 1, read by the pushbridge versions before as before.
/// An Android token of 163 bytes with no app or labels takes 166 bytes. Decoding checks every
/// length, so a damaged blob is an error, never a crash.
enum DeviceListCodec {
    static let version: UInt8 = 1
    /// The version of a list with push-to-start tokens.
    static let versionWithPushToStart: UInt8 = 2
    /// The version of a list with preferences (the user's or a device's muted categories).
    static let versionWithPreferences: UInt8 = 3
    private static let platformCodes: [String: UInt8] = ["android": 1, "ios": 2, "web": 3]
    private static let platformNames: [UInt8: String] = [1: "android", 2: "ios", 3: "web"]

    static func encode(_ devices: [RegisteredDevice], preferences: UserChoices = .init()) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(2 + devices.reduce(0) { $0 + $1.id.utf8.count + 4 })
        let withPreferences = !preferences.isEmpty || devices.contains { !$0.muted.isEmpty }
        out.append(
            withPreferences
                ? versionWithPreferences
                : devices.contains { !$0.pushToStart.isEmpty || $0.liveActivityToken != nil } ? versionWithPushToStart : version)
        putVarint(UInt64(devices.count), &out)
        for d in devices {
            var flags: UInt8 = d.kind == .token ? 1 : 0
            if let p = d.platform, let code = platformCodes[p] { flags |= code << 1 }
            if d.app != nil { flags |= 1 << 3 }
            if !d.labels.isEmpty { flags |= 1 << 4 }
            if !d.pushToStart.isEmpty { flags |= 1 << 5 }
            if d.liveActivityToken != nil { flags |= 1 << 6 }
            if !d.muted.isEmpty { flags |= 1 << 7 }
            out.append(flags)
            putString(d.id, &out)
            if let app = d.app { putString(app, &out) }
            if !d.labels.isEmpty {
                putVarint(UInt64(d.labels.count), &out)
                for key in d.labels.keys.sorted() {
                    putString(key, &out)
                    putString(d.labels[key]!, &out)
                }
            }
            if !d.pushToStart.isEmpty {
                putVarint(UInt64(d.pushToStart.count), &out)
                for type in d.pushToStart.keys.sorted() {
                    putString(type, &out)
                    putString(d.pushToStart[type]!, &out)
                }
            }
            if let token = d.liveActivityToken { putString(token, &out) }
            if !d.muted.isEmpty { putStrings(d.muted, &out) }
        }
        if withPreferences { encode(preferences, &out) }
        return out
    }

    private static func encode(_ p: UserChoices, _ out: inout [UInt8]) {
        var flags: UInt8 = p.timeZone != nil ? 1 : 0
        if !p.muted.isEmpty { flags |= 1 << 1 }
        switch p.quietHours {
        case .off?: flags |= 1 << 2
        case .window?: flags |= 1 << 3
        case nil: break
        }
        out.append(flags)
        if let zone = p.timeZone { putString(zone, &out) }
        if !p.muted.isEmpty { putStrings(p.muted, &out) }
        if case .window(let window)? = p.quietHours {
            putVarint(UInt64(window.from.minuteOfDay), &out)
            putVarint(UInt64(window.to.minuteOfDay), &out)
        }
    }

    static func decode(_ bytes: UnsafeRawBufferPointer) throws(RegistryError) -> [RegisteredDevice] {
        try decodeUser(bytes).devices
    }

    static func decodeUser(_ bytes: UnsafeRawBufferPointer) throws(RegistryError) -> RegisteredUser {
        var r = Reader(bytes: bytes)
        let listVersion = try readVersion(&r)
        let count = try r.count()
        var devices: [RegisteredDevice] = []
        devices.reserveCapacity(count)
        for _ in 0..<count {
            let flags = try r.byte()
            let id = try r.string()
            let platform = platformNames[(flags >> 1) & 3]
            let app = flags & (1 << 3) != 0 ? try r.string() : nil
            var labels: [String: String] = [:]
            if flags & (1 << 4) != 0 {
                for _ in 0..<(try r.count()) { labels[try r.string()] = try r.string() }
            }
            var pushToStart: [String: String] = [:]
            var liveActivityToken: String?
            if flags & (3 << 5) != 0, listVersion == version { throw damaged("Live Activity tokens in a version 1 list") }
            if flags & (1 << 5) != 0 {
                for _ in 0..<(try r.count()) { pushToStart[try r.string()] = try r.string() }
            }
            if flags & (1 << 6) != 0 { liveActivityToken = try r.string() }
            if flags & (1 << 7) != 0, listVersion != versionWithPreferences { throw damaged("muted categories in a version \(listVersion) list") }
            let muted = flags & (1 << 7) != 0 ? try r.strings() : []
            devices.append(
                RegisteredDevice(
                    kind: flags & 1 != 0 ? .token : .fid, id: id, platform: platform, app: app, labels: labels, pushToStart: pushToStart,
                    liveActivityToken: liveActivityToken, muted: muted))
        }
        let preferences = listVersion == versionWithPreferences ? try decodePreferences(&r) : UserChoices()
        guard r.index == bytes.count else { throw damaged("bytes after the device list") }
        return RegisteredUser(devices: devices, preferences: preferences)
    }

    private static func decodePreferences(_ r: inout Reader) throws(RegistryError) -> UserChoices {
        let flags = try r.byte()
        var p = UserChoices()
        if flags & 1 != 0 { p.timeZone = try r.string() }
        if flags & (1 << 1) != 0 { p.muted = try r.strings() }
        if flags & (1 << 2) != 0 { p.quietHours = .off }
        if flags & (1 << 3) != 0 {
            let (from, to) = (try r.varint(), try r.varint())
            guard from < 1440, to < 1440, flags & (1 << 2) == 0, let start = ClockTime(minuteOfDay: Int(from)),
                let end = ClockTime(minuteOfDay: Int(to)), let window = QuietWindow(from: start, to: end)
            else { throw damaged("quiet hours out of range") }
            p.quietHours = .window(window)
        }
        return p
    }

    /// The number of devices, read from the header only.
    static func count(_ bytes: UnsafeRawBufferPointer) throws(RegistryError) -> Int {
        var r = Reader(bytes: bytes)
        _ = try readVersion(&r)
        return try r.count()
    }

    private static func readVersion(_ r: inout Reader) throws(RegistryError) -> UInt8 {
        let listVersion = try r.byte()
        guard (version...versionWithPreferences).contains(listVersion) else { throw damaged("unknown device list version") }
        return listVersion
    }

    private static func damaged(_ why: String) -> RegistryError {
        RegistryError(code: .unusableFile, message: "a stored device list is damaged (\(why))")
    }

    private static func putVarint(_ value: UInt64, _ out: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            out.append(UInt8(v & 0x7f) | 0x80)
            v >>= 7
        }
        out.append(UInt8(v))
    }

    private static func putString(_ s: String, _ out: inout [UInt8]) {
        putVarint(UInt64(s.utf8.count), &out)
        out.append(contentsOf: s.utf8)
    }

    private static func putStrings(_ list: [String], _ out: inout [UInt8]) {
        putVarint(UInt64(list.count), &out)
        for s in list { putString(s, &out) }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        mutating func byte() throws(RegistryError) -> UInt8 {
            guard index < bytes.count else { throw damaged("truncated") }
            defer { index += 1 }
            return bytes[index]
        }

        mutating func varint() throws(RegistryError) -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let b = try byte()
                guard shift < 64 else { throw damaged("a length is too long") }
                value |= UInt64(b & 0x7f) << shift
                if b & 0x80 == 0 { return value }
                shift += 7
            }
        }

        /// A count or length, never more than the bytes left (each item takes at least one).
        mutating func count() throws(RegistryError) -> Int {
            let v = try varint()
            guard v <= UInt64(bytes.count - index) else { throw damaged("a count is larger than the data") }
            return Int(v)
        }

        mutating func string() throws(RegistryError) -> String {
            let n = try count()
            defer { index += n }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[index..<index + n]), as: UTF8.self)
        }

        mutating func strings() throws(RegistryError) -> [String] {
            var list: [String] = []
            for _ in 0..<(try count()) { list.append(try string()) }
            return list
        }
    }
}
