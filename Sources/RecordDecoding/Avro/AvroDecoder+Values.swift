import ExtrasBase64
import JSON

/// How scalars become ``JSONValue``s: numbers, bytes and the logical types' text.
extension AvroDecoder {
    /// `count` bytes at `at` as a decimal's text, a UUID's text, or base64.
    mutating func binary(count: Int, _ logical: AvroLogicalType, _ start: Int) throws(DecodeFailure) -> JSONValue {
        let raw = UnsafeBufferPointer(rebasing: bytes[at..<at + count])
        at += count
        switch logical {
        case .decimal(let precision, let scale):
            guard let text = AvroDecimal.text(raw, precision: precision, scale: scale) else {
                throw DecodeFailure("a decimal of \(count) bytes, more than precision \(precision) can need", at: start)
            }
            return .string(text)
        case .uuid where count == 16: return .string(AvroUUIDText.uuid(raw))
        default: return .string(Base64.encodeToString(bytes: raw))
        }
    }

    /// A time-millis or time-micros value, which must lie within one day.
    func timeOfDay(_ value: Int64, perSecond: Int64, _ start: Int) throws(DecodeFailure) -> String {
        guard value >= 0, value < 86_400 * perSecond else {
            throw DecodeFailure("a time of day of \(value) \(perSecond == 1_000 ? "ms" : "µs"), not within one day", at: start)
        }
        return AvroTime.timeOfDay(value, perSecond: perSecond)
    }

    /// A float prints as its shortest text ("11.8", not 11.800000190734863).
    static func number(_ value: Float) -> JSONValue {
        guard value.isFinite else { return nonFinite(isNaN: value.isNaN, negative: value < 0) }
        return .double(Double(String(value)) ?? Double(value))
    }

    static func number(_ value: Double) -> JSONValue {
        guard value.isFinite else { return nonFinite(isNaN: value.isNaN, negative: value < 0) }
        return .double(value)
    }

    /// JSON has no NaN or infinities; they travel as the text Java and JavaScript print.
    private static func nonFinite(isNaN: Bool, negative: Bool) -> JSONValue {
        .string(isNaN ? "NaN" : negative ? "-Infinity" : "Infinity")
    }
}
