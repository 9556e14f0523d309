import JSON

/// The syntax of single values as FCM's v1 API reads them: field names, proto3 JSON integers,
/// floats, enums, durations and timestamps, colors, topic names, URLs, reserved data keys.
///
/// Written apart from the mapping core's own checks on purpose: the emulator is the oracle that
/// core is tested against, so it shares none of its code.
extension MessageValidator {
    /// `collapseKey` → `collapse_key`; snake_case stays as it is.
    static func snake(_ key: String) -> String {
        guard key.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else { return key }
        var out = ""
        for c in key {
            if c.isUppercase {
                out.append("_")
                out += c.lowercased()
            } else {
                out.append(c)
            }
        }
        return out
    }

    /// proto3 JSON for an int32 field: a number without a fractional part, or the same as a
    /// decimal string (exponents allowed in both), within 32 bits; not an empty string.
    static func isInt32(_ value: JSONValue) -> Bool {
        let number: Double
        switch value {
        case .int(let i): return i >= Int64(Int32.min) && i <= Int64(Int32.max)
        case .double(let d): number = d
        case .string(let s):
            guard !s.isEmpty, s.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }), let d = Double(s) else { return false }
            number = d
        default: return false
        }
        return number.rounded(.towardZero) == number && number >= Double(Int32.min) && number <= Double(Int32.max)
    }

    /// Message.data (discovery revision 20261023): "The key should not be a reserved word ("from",
    /// "message_type", or any word starting with "google." or "gcm.notification.")". Observed
    /// refusals: `from` (firebase-admin-go#159; beste/firebase-php#574). Revisions up to 20240326
    /// said any word starting with "google" or "gcm"; no refusal of an undotted key has been
    /// published, nor of other `gcm.` keys, so those are accepted, and the keys the Android SDK
    /// drops from `getData()` are device notes (``DeviceNote``). Case as the reference writes it.
    static func isReservedDataKey(_ key: String) -> Bool {
        key == "from" || key == "message_type" || key.hasPrefix("google.") || key.hasPrefix("gcm.notification.")
    }

    static func reservedDataKeyProblem(_ key: String) -> String {
        "Invalid data key \"\(key)\": \"from\", \"message_type\" and keys starting with \"google.\" or \"gcm.notification.\" are reserved"
    }

    /// proto3 JSON for a float field: a number, a numeric string, "NaN", "Infinity" or
    /// "-Infinity"; finite values within a 32-bit float's range.
    static func isFloat(_ value: JSONValue) -> Bool {
        let number: Double
        switch value {
        case .int(let i): number = Double(i)
        case .bigInteger(let s): number = Double(s) ?? .infinity
        case .double(let d): number = d
        case .string(let s):
            if ["NaN", "Infinity", "-Infinity"].contains(s) { return true }
            guard !s.isEmpty, s.allSatisfy({ $0.isASCII && ($0.isNumber || "+-.eE".contains($0)) }), let d = Double(s) else { return false }
            number = d
        default: return false
        }
        return number.isFinite && abs(number) <= Double(Float.greatestFiniteMagnitude)
    }

    /// proto3 JSON for an enum: one of its names, or an integer. The discovery document lists the
    /// names but not their numbers; proto3 numbers its first value 0 and the FCM enums go up by
    /// one in the listed order (`NORMAL`, `HIGH`; `PRIORITY_UNSPECIFIED` … `PRIORITY_MAX`), so the
    /// integers accepted are 0 to count - 1.
    static func isEnumValue(_ value: JSONValue, _ names: [String]) -> Bool {
        switch value {
        case .string(let s): names.contains(s)
        case .int(let i): i >= 0 && i < Int64(names.count)
        default: false
        }
    }

    /// An absolute `https:` URL with a host.
    static func isHTTPSURL(_ s: String) -> Bool {
        guard s.lowercased().hasPrefix("https://") else { return false }
        let host = s.dropFirst("https://".count).prefix { !"/?#".contains($0) }
        return !host.isEmpty && !host.contains(where: \.isWhitespace)
    }

    static func isTopicByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"), UInt8(ascii: "%"):
            true
        default: false
        }
    }

    static func isColor(_ s: String) -> Bool {
        let b = Array(s.utf8)
        return b.count == 7 && b[0] == UInt8(ascii: "#")
            && b.dropFirst().allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46)
            }
    }

    /// protobuf's JSON Duration: `"3600s"`, `"1.5s"`, `"-2s"` (up to 9 fraction digits), within
    /// ±315,576,000,000 s (duration.proto: "approximately +-10,000 years").
    static func durationSeconds(_ s: String) -> Double? {
        guard s.hasSuffix("s") else { return nil }
        var number = s.dropLast()
        let negative = number.hasPrefix("-")
        if negative { number = number.dropFirst() }
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].allSatisfy(\.isASCII), parts[0].allSatisfy(\.isNumber) else { return nil }
        if parts.count == 2 {
            guard (1...9).contains(parts[1].count), parts[1].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        }
        guard let seconds = Double(number), seconds <= 315_576_000_000 else { return nil }
        return negative ? -seconds : seconds
    }

    /// protobuf's JSON Timestamp (RFC 3339): `1972-01-01T10:00:20.021Z` or with an offset
    /// (`+05:30`), 0 to 9 fraction digits, years 0001 to 9999, a real day of its month.
    static func isTimestamp(_ s: String) -> Bool {
        let b = Array(s.utf8)
        func digits(_ at: Int, _ count: Int) -> Int? {
            guard at + count <= b.count else { return nil }
            var n = 0
            for c in b[at..<(at + count)] {
                guard c >= 0x30 && c <= 0x39 else { return nil }
                n = n * 10 + Int(c - 0x30)
            }
            return n
        }
        func byte(_ at: Int, _ c: Character) -> Bool { at < b.count && b[at] == c.asciiValue! }
        guard let year = digits(0, 4), byte(4, "-"), let month = digits(5, 2), byte(7, "-"), let day = digits(8, 2), byte(10, "T"),
            let hour = digits(11, 2), byte(13, ":"), let minute = digits(14, 2), byte(16, ":"), let second = digits(17, 2)
        else { return false }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard year >= 1, (1...12).contains(month), day >= 1, day <= days[month - 1], hour < 24, minute < 60, second < 60 else { return false }
        var i = 19
        if byte(i, ".") {
            let start = i + 1
            i = start
            while i < b.count, b[i] >= 0x30, b[i] <= 0x39 { i += 1 }
            guard (1...9).contains(i - start) else { return false }
        }
        if byte(i, "Z") { return i + 1 == b.count }
        guard byte(i, "+") || byte(i, "-"), let offsetHours = digits(i + 1, 2), byte(i + 3, ":"), let offsetMinutes = digits(i + 4, 2) else {
            return false
        }
        return offsetHours < 24 && offsetMinutes < 60 && i + 6 == b.count
    }
}
