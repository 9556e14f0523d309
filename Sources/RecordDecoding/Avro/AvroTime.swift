import Dates
import JSON

/// The text of Avro's date and time logical types, without Foundation: RFC 3339 in UTC
/// (`2026-11-24T09:30:00.123Z`), the same without the `Z` for local timestamps, `2026-11-24`
/// for a date and `09:30:00.123` for a time of day. Milliseconds always give 3 fraction
/// digits and microseconds 6. Values before 1970 count back from the epoch; years outside
/// 0000–9999 are written with as many digits as they need (and a `-` before year 0).
enum AvroTime {
    static func timestamp(_ value: Int64, perSecond: Int64, utc: Bool) -> String {
        // Floor division without overflow, even for Int64.min.
        var seconds = value / perSecond
        var fraction = value % perSecond
        if fraction < 0 {
            seconds -= 1
            fraction += perSecond
        }
        let (days, secondOfDay) = CivilDate.split(seconds: seconds)
        return AvroText.string(capacity: 40) { text in
            text.date(days)
            text.append(UInt8(ascii: "T"))
            text.clock(secondOfDay, fraction: fraction, digits: perSecond == 1_000 ? 3 : 6)
            if utc { text.append(UInt8(ascii: "Z")) }
        }
    }

    static func date(days: Int64) -> String {
        AvroText.string(capacity: 40) { $0.date(days) }
    }

    /// `value` is within one day (the decoder checks).
    static func timeOfDay(_ value: Int64, perSecond: Int64) -> String {
        AvroText.string(capacity: 20) { $0.clock(value / perSecond, fraction: value % perSecond, digits: perSecond == 1_000 ? 3 : 6) }
    }
}

/// ASCII text written straight into a new String's storage, for values whose longest text is
/// known (a timestamp of any Int64 is at most 31 bytes), so it costs one allocation.
struct AvroText {
    private let buffer: UnsafeMutableBufferPointer<UInt8>
    private(set) var count = 0

    private init(_ buffer: UnsafeMutableBufferPointer<UInt8>) { self.buffer = buffer }

    /// The text `write` makes, which must fit in `capacity` bytes.
    static func string(capacity: Int, _ write: (inout AvroText) -> Void) -> String {
        String(unsafeUninitializedCapacity: capacity) { buffer in
            var text = AvroText(buffer)
            write(&text)
            return text.count
        }
    }

    mutating func append(_ byte: UInt8) {
        precondition(count < buffer.count, "AvroText capacity too small")  // a bug, never input
        buffer[count] = byte
        count += 1
    }

    /// `value` (≥ 0) in decimal with leading zeros to `width` digits.
    mutating func digits(_ value: Int64, width: Int) {
        var length = 1
        var power: Int64 = 10
        while length < 19, value >= power {
            length += 1
            power &*= 10
        }
        let total = max(width, length)
        precondition(count + total <= buffer.count, "AvroText capacity too small")
        var rest = value
        for i in stride(from: count + total - 1, through: count, by: -1) {
            buffer[i] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
        count += total
    }

    /// `YYYY-MM-DD` of the day `days` after 1970-01-01 (the proleptic Gregorian calendar, as
    /// Avro's date is defined).
    mutating func date(_ days: Int64) {
        let (year, month, day) = CivilDate.from(daysSinceEpoch: days)
        if year < 0 { append(UInt8(ascii: "-")) }
        digits(year < 0 ? -year : year, width: 4)
        append(UInt8(ascii: "-"))
        digits(month, width: 2)
        append(UInt8(ascii: "-"))
        digits(day, width: 2)
    }

    /// `HH:MM:SS.fff…` of `seconds` into a day and `fraction` of a second in `digits` digits.
    mutating func clock(_ seconds: Int64, fraction: Int64, digits count: Int) {
        digits(seconds / 3_600, width: 2)
        append(UInt8(ascii: ":"))
        digits(seconds / 60 % 60, width: 2)
        append(UInt8(ascii: ":"))
        digits(seconds % 60, width: 2)
        append(UInt8(ascii: "."))
        digits(fraction, width: count)
    }
}
