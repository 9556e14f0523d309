import JSON

/// The well-known types as the proto3 JSON mapping writes them, so a mapping reads a
/// Timestamp as its RFC 3339 text rather than `{seconds, nanos}`:
///
/// | message | value |
/// |---|---|
/// | Timestamp | `"2026-11-24T09:30:00.123Z"` (UTC; 0, 3, 6 or 9 fraction digits) |
/// | Duration | `"1.500s"` (the same fraction digits; `-` when negative) |
/// | DoubleValue … BytesValue | the wrapped value (an absent wrapper field stays missing) |
/// | Struct / Value / ListValue | object / its JSON value / array; NullValue is `null` |
/// | Empty | `{}` |
/// | FieldMask | its paths joined with `,`, as written (not turned into lowerCamelCase) |
/// | Any | `{"@type": type_url, "value": base64 of value}` (the packed message is not decoded) |
///
/// A Value with no kind set is `null`. A Timestamp or Duration outside the range the mapping
/// allows (years 1 to 9999; ±10,000 years; nanos within a second, of the seconds' sign) is a
/// SchemaError.
extension ProtoMessageDecoder {
    func decodeWellKnown(_ kind: ProtoWellKnown, _ plan: ProtoMessagePlan, _ spans: ProtoSpans, depth: Int) throws(ProtoWireError) -> JSONValue {
        switch kind {
        case .timestamp:
            let (seconds, nanos) = try secondsAndNanos(spans)
            guard let text = ProtoTime.timestamp(seconds: seconds, nanos: nanos) else {
                throw ProtoWireError("Timestamp (seconds \(seconds), nanos \(nanos)) is out of range", at: spans.first.lowerBound)
            }
            return .string(text)
        case .duration:
            let (seconds, nanos) = try secondsAndNanos(spans)
            guard let text = ProtoTime.duration(seconds: seconds, nanos: nanos) else {
                throw ProtoWireError("Duration (seconds \(seconds), nanos \(nanos)) is out of range", at: spans.first.lowerBound)
            }
            return .string(text)
        default: break
        }
        let object = try fields(of: plan, spans, keeping: .all, depth: depth)
        guard case .object(let members) = object else { return object }
        switch kind {
        case .wrapper, .value: return members.first?.value ?? .null
        case .structObject, .listValue: return members.first?.value ?? (kind == .listValue ? .array([]) : .object([]))
        case .empty: return .object([])
        case .fieldMask:
            guard case .array(let paths)? = members.first?.value else { return .string("") }
            return .string(paths.compactMap(\.stringValue).joined(separator: ","))
        case .any: return .object([("@type", object["type_url"] ?? .string("")), ("value", object["value"] ?? .string(""))])
        case .timestamp, .duration: return object
        }
    }

    /// A Timestamp's or Duration's `seconds` (int64, field 1) and `nanos` (int32, field 2).
    private func secondsAndNanos(_ spans: ProtoSpans) throws(ProtoWireError) -> (Int64, Int32) {
        var seconds: Int64 = 0
        var nanos: Int32 = 0
        for range in [spans.first] + spans.more {
            var reader = ProtoWireReader(bytes, from: range.lowerBound, to: range.upperBound)
            while !reader.atEnd {
                let tagStart = reader.index
                let (number, wireType) = try reader.tag()
                guard number == 1 || number == 2 else {
                    try reader.skip(wireType: wireType, number: number, at: tagStart)
                    continue
                }
                guard wireType == ProtoWireType.varint else {
                    throw ProtoWireError("wire type \(wireType) does not fit field \(number == 1 ? "seconds" : "nanos")", at: tagStart)
                        .within(number == 1 ? "seconds" : "nanos")
                }
                let value = try reader.varint()
                if number == 1 { seconds = Int64(bitPattern: value) } else { nanos = Int32(truncatingIfNeeded: value) }
            }
        }
        return (seconds, nanos)
    }
}

/// RFC 3339 and proto3 JSON duration text, without Foundation.
enum ProtoTime {
    /// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, the range the JSON mapping allows.
    static let minSeconds: Int64 = -62_135_596_800
    static let maxSeconds: Int64 = 253_402_300_799
    /// About 10,000 years, the Duration's documented range.
    static let maxDurationSeconds: Int64 = 315_576_000_000

    static func timestamp(seconds: Int64, nanos: Int32) -> String? {
        guard seconds >= minSeconds, seconds <= maxSeconds, nanos >= 0, nanos < 1_000_000_000 else { return nil }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        // The civil date of a day count from 1970-01-01 (Howard Hinnant's days_from_civil, inverted).
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
        text += pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        return text + fraction(nanos) + "Z"
    }

    static func duration(seconds: Int64, nanos: Int32) -> String? {
        guard seconds >= -maxDurationSeconds, seconds <= maxDurationSeconds, nanos > -1_000_000_000, nanos < 1_000_000_000,
            !(seconds > 0 && nanos < 0), !(seconds < 0 && nanos > 0)
        else { return nil }
        let sign = seconds < 0 || nanos < 0 ? "-" : ""
        return sign + String(seconds.magnitude) + fraction(Int32(nanos.magnitude)) + "s"
    }

    /// Nothing for whole seconds, else 3, 6 or 9 digits: as few as show the value exactly.
    private static func fraction(_ nanos: Int32) -> String {
        if nanos == 0 { return "" }
        if nanos % 1_000_000 == 0 { return "." + pad(Int64(nanos / 1_000_000), 3) }
        if nanos % 1000 == 0 { return "." + pad(Int64(nanos / 1000), 6) }
        return "." + pad(Int64(nanos), 9)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
