import Dates

/// How old an event is, and what its mapping's ``MaxAge`` makes of it: the one place the age
/// is computed. Pure: the caller passes the time of sending, so tests fix it.
public enum EventAge {
    public enum Judgement: Sendable, Equatable {
        /// Young enough; `ttl: remaining` gives the push this many seconds, rounded down so it
        /// never outlives `max_age`.
        case fresh(remainingSeconds: Int)
        case tooOld(ageMilliseconds: Int64)
    }

    /// Compares the event's time with `now` (both milliseconds since the Unix epoch). Older than
    /// `maxAgeSeconds` is too old; exactly that old is fresh with nothing remaining. A time in
    /// the future (a producer's clock ahead of ours) counts as age 0, never as more time.
    public static func judge(eventTime: Int64, now: Int64, maxAgeSeconds: Int) -> Judgement {
        let age = max(0, now - eventTime)
        let limit = Int64(maxAgeSeconds) * 1000
        guard age <= limit else { return .tooOld(ageMilliseconds: age) }
        return .fresh(remainingSeconds: Int((limit - age) / 1000))
    }

    /// The event's time in milliseconds since the Unix epoch, from where `source` says.
    ///
    /// - Throws: ``MappingFailure/invalidEventTime(field:reason:)`` when it is missing or
    ///   cannot be read: the event is dead-lettered, never guessed at.
    public static func eventTime(
        _ event: DecodedEvent, recordTimestamp: Int64?, from source: MaxAge.EventTime
    ) throws(MappingFailure) -> Int64 {
        switch source {
        case .recordTimestamp:
            guard let recordTimestamp else {
                throw .invalidEventTime(field: source.name, reason: "the record has none; set `occurred_at` to a field of the event")
            }
            return recordTimestamp
        case .field(let pointer, let unit):
            let field = pointer.description
            switch pointer.resolve(in: event.data) ?? .null {
            case .null:
                throw .invalidEventTime(field: field, reason: "missing or null")
            case .string(let text):
                guard let ms = RFC3339.parseMilliseconds(text) else {
                    throw .invalidEventTime(field: field, reason: "\"\(text.prefix(64))\" is not an RFC 3339 time with a zone")
                }
                return ms
            case .int(let n):
                return try epoch(Double(n), unit: unit, field: field)
            case .double(let d):
                return try epoch(d, unit: unit, field: field)
            case .bigInteger(let digits):
                throw .invalidEventTime(field: field, reason: "\(digits.prefix(64)) is not a time in epoch \(unit.rawValue)")
            case let other:
                throw .invalidEventTime(field: field, reason: "\(other.typeName), expected an RFC 3339 string or epoch \(unit.rawValue)")
            }
        }
    }

    /// A time in `data` at `pointer`, read as `occurred_at` reads one (RFC 3339, or epoch
    /// `unit`s), in milliseconds. An unreadable one is the field's fault, not the event's time's:
    /// `invalid_value` naming `field` (default: the pointer), its reason after `role` if given.
    static func fieldTime(
        in data: JSONValue, at pointer: JSONPointer, unit: MaxAge.EpochUnit, role: String?, field: String? = nil
    ) throws(MappingFailure) -> Int64 {
        do {
            return try eventTime(DecodedEvent(type: "", id: "", data: data, format: .json), recordTimestamp: nil, from: .field(pointer, unit: unit))
        } catch {
            guard case .invalidEventTime(let named, let reason) = error else { throw error }
            throw .invalidValue(field: field ?? named, reason: role.map { "\($0): \(reason)" } ?? reason)
        }
    }

    /// Whole seconds since the Unix epoch of `milliseconds`, rounded down.
    static func seconds(_ milliseconds: Int64) -> Int64 {
        Int64((Double(milliseconds) / 1000).rounded(.down))
    }

    /// Years 0000 to 9999, what RFC 3339 can write: a value outside is no time at all. (Seconds
    /// read as milliseconds land in January 1970, inside: `unit` must be right, and such an
    /// event is simply too old.)
    static let range: ClosedRange<Double> = -62_167_219_200_000...253_402_300_799_999

    private static func epoch(_ value: Double, unit: MaxAge.EpochUnit, field: String) throws(MappingFailure) -> Int64 {
        let ms = unit == .seconds ? value * 1000 : value
        guard ms.isFinite, range.contains(ms) else {
            throw .invalidEventTime(field: field, reason: "\(value) is not a time in epoch \(unit.rawValue)")
        }
        return Int64(ms.rounded(.down))
    }

    /// `1h2m5s`, `45s`, `0s`: a duration as mappings write one.
    public static func text(seconds: Int64) -> String {
        guard seconds > 0 else { return "0s" }
        var out = ""
        var rest = seconds
        for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60), ("s", 1)] where rest >= size {
            out += "\(rest / size)\(unit)"
            rest %= size
        }
        return out
    }
}
