import Kafka

extension TimerRecord {
    /// The headers a timer record adds: everything the ladder reads in one, `pushbridge-timer`
    /// (``fields``), so that a hop parses one header rather than a dozen; a retry's targets in
    /// a second. Written and read as text, so `kcat -f '%h'` shows a timer.
    public enum Header {
        /// `v=1 id=… due=… release=… reason=… created=… hops=… redefers=… source=topic/partition/offset`,
        /// then `timestamp=…` (the source record's, when it had one) and `push=…` (mappings
        /// with `pushes:`): fields separated by one space, times in UTC milliseconds.
        public static let timer = "pushbridge-timer"
        /// Retry only: the targets still to send (opaque to the ladder).
        public static let targets = "pushbridge-timer-targets"

        /// Whether a header is one of a timer's own (`pushbridge-timer…`): a source record's
        /// header of such a name is not carried.
        public static func isReserved(_ name: String) -> Bool { name.hasPrefix("pushbridge-timer") }
    }

    /// `pushbridge-timer`'s value (``Header/timer``). Topic and push names have no spaces
    /// (Kafka's topic names: letters, digits, `.`, `_`, `-`; push names: the mapping schema's).
    var fields: String {
        var text = "v=\(Self.version) id=\(id.hex) due=\(due) release=\(release) reason=\(reason.rawValue) created=\(created)"
        text += " hops=\(hops) redefers=\(redefers) source=\(source.topic)/\(source.partition)/\(source.offset)"
        if let timestamp = source.timestamp { text += " timestamp=\(timestamp)" }
        if let push { text += " push=\(push)" }
        return text
    }

    /// Reads a record of the timer topic.
    ///
    /// - Throws: ``TimerRecordError`` naming the header or field that is missing, repeated or
    ///   unreadable (`unknown_timer_version` for a `v` this pushbridge does not know;
    ///   `malformed_timer` otherwise). Never traps on what a record says.
    public init(parsing message: KafkaMessage) throws(TimerRecordError) {
        var own: [UInt8]?
        var targets: String?
        var sourceHeaders: [KafkaHeader] = []
        sourceHeaders.reserveCapacity(message.headers.count - 1)
        for header in message.headers {
            switch header.name {
            case Header.timer:
                guard own == nil else { throw .malformed("\(Header.timer) appears twice") }
                own = header.value ?? []
            case Header.targets:
                guard targets == nil else { throw .malformed("\(Header.targets) appears twice") }
                guard let text = header.stringValue else { throw .malformed("\(Header.targets) has no UTF-8 value") }
                targets = text
            case let name where Header.isReserved(name): break  // another pushbridge's, not read by this one
            default: sourceHeaders.append(header)
            }
        }
        guard let own else { throw .malformed("\(Header.timer) is missing") }
        let fields = try TimerFields(own)
        self.init(
            key: message.key, value: message.value, sourceHeaders: sourceHeaders, id: fields.id, due: fields.due, release: fields.release,
            reason: fields.reason, push: fields.push, created: fields.created, hops: fields.hops, redefers: fields.redefers, targets: targets,
            source: fields.source)
    }
}

/// `pushbridge-timer`'s fields, read from its bytes without a string per field.
private struct TimerFields {
    var id: TimerID
    var due: Int64, release: Int64, created: Int64
    var reason: TimerRecord.Reason
    var hops: Int, redefers: Int
    var push: String?
    var source: TimerRecord.Source

    init(_ bytes: [UInt8]) throws(TimerRecordError) {
        var values = [ArraySlice<UInt8>?](repeating: nil, count: Name.allCases.count)
        for field in bytes.split(separator: UInt8(ascii: " ")) {
            guard let equals = field.firstIndex(of: UInt8(ascii: "=")) else {
                throw .malformed("pushbridge-timer: \"\(Self.text(field))\" is no name=value")
            }
            // Names this version does not know are a newer writer's additions: ignored.
            guard let name = Name.allCases.first(where: { Self.labels[$0.rawValue].elementsEqual(field[..<equals]) }) else { continue }
            guard values[name.rawValue] == nil else { throw .malformed("pushbridge-timer: \(name) appears twice") }
            values[name.rawValue] = field[(equals + 1)...]
        }
        func required(_ name: Name) throws(TimerRecordError) -> ArraySlice<UInt8> {
            guard let value = values[name.rawValue] else { throw .malformed("pushbridge-timer: \(name) is missing") }
            return value
        }
        func integer(_ name: Name, max: Int64 = .max) throws(TimerRecordError) -> Int64 {
            let value = try required(name)
            guard let number = Self.decimal(value), number <= max else {
                throw .malformed("pushbridge-timer: \(name) must be a whole number ≥ 0, got \"\(Self.text(value))\"")
            }
            return number
        }
        let version = try required(.version)
        guard version.elementsEqual(String(TimerRecord.version).utf8) else {
            throw TimerRecordError(code: .unknownVersion, description: "pushbridge-timer: v is \"\(Self.text(version))\"; this pushbridge reads 1")
        }
        let idDigits = try required(.id)
        guard let id = TimerID(hexDigits: idDigits) else {
            throw .malformed("pushbridge-timer: id must be 32 hex digits, got \"\(Self.text(idDigits))\"")
        }
        let reasonText = Self.text(try required(.reason))
        guard let reason = TimerRecord.Reason(rawValue: reasonText) else {
            throw .malformed("pushbridge-timer: reason must be send_at, quiet_hours or retry, got \"\(reasonText)\"")
        }
        self.id = id
        self.reason = reason
        (due, release, created) = (try integer(.due), try integer(.release), try integer(.created))
        (hops, redefers) = (Int(try integer(.hops, max: Int64(Int32.max))), Int(try integer(.redefers, max: Int64(Int32.max))))
        push = values[Name.push.rawValue].map { String(decoding: $0, as: UTF8.self) }
        let timestamp = try values[Name.timestamp.rawValue] == nil ? nil : integer(.timestamp)
        source = try Self.source(try required(.source), timestamp: timestamp)
    }

    /// `topic/partition/offset` (a topic name has no `/`, and at most 249 characters).
    private static func source(_ value: ArraySlice<UInt8>, timestamp: Int64?) throws(TimerRecordError) -> TimerRecord.Source {
        let parts = value.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].count <= 249, let partition = decimal(parts[1]), partition <= Int64(Int32.max),
            let offset = decimal(parts[2])
        else { throw .malformed("pushbridge-timer: source must be topic/partition/offset, got \"\(text(value))\"") }
        return TimerRecord.Source(
            topic: String(decoding: parts[0], as: UTF8.self), partition: Int32(partition), offset: offset, timestamp: timestamp)
    }

    /// A decimal of 1 to 18 digits (no sign, `+` or spaces), or nil.
    static func decimal(_ digits: ArraySlice<UInt8>) -> Int64? {
        guard !digits.isEmpty, digits.count <= 18 else { return nil }
        var value: Int64 = 0
        for digit in digits {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int64(digit - UInt8(ascii: "0"))
        }
        return value
    }

    /// The first 40 bytes of `bytes`, for an error message only.
    private static func text(_ bytes: ArraySlice<UInt8>) -> String { String(decoding: bytes.prefix(40), as: UTF8.self) }

    /// The fields this version reads, in the order ``TimerRecord/fields`` writes them.
    private enum Name: Int, CaseIterable, CustomStringConvertible {
        case version, id, due, release, reason, created, hops, redefers, source, timestamp, push

        var description: String {
            ["v", "id", "due", "release", "reason", "created", "hops", "redefers", "source", "timestamp", "push"][rawValue]
        }
    }

    private static let labels: [[UInt8]] = Name.allCases.map { Array($0.description.utf8) }
}

/// Why a record of the timer topic cannot be read: a struct with an opaque code, as the
/// pipeline's other errors (the code names the dead-letter reason the engine will give it).
public struct TimerRecordError: Error, Equatable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String
        /// `pushbridge-timer`'s `v` is not one this pushbridge reads (written by a newer one).
        public static let unknownVersion = Code(name: "unknown_timer_version")
        /// A header or field is missing, repeated or unreadable.
        public static let malformed = Code(name: "malformed_timer")
        public var description: String { name }
    }

    public let code: Code
    /// Which header or field, and what is wrong with it.
    public let description: String

    static func malformed(_ description: String) -> TimerRecordError { TimerRecordError(code: .malformed, description: description) }
}
