import JSON

/// The syntax of single values as FCM's v1 API reads them: field names, proto3 JSON integers and
/// durations, colors, topic names, reserved data keys.
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

    static func isReservedDataKey(_ key: String) -> Bool {
        key == "from" || key == "message_type" || key.hasPrefix("google") || key.hasPrefix("gcm")
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

    /// protobuf's JSON Duration: `"3600s"`, `"1.5s"` (up to 9 fraction digits).
    static func durationSeconds(_ s: String) -> Double? {
        guard s.hasSuffix("s") else { return nil }
        let number = s.dropLast()
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty, parts[0].allSatisfy(\.isASCII), parts[0].allSatisfy(\.isNumber) else { return nil }
        if parts.count == 2 {
            guard (1...9).contains(parts[1].count), parts[1].allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        }
        return Double(number)
    }
}
