import Kafka

extension TimerRecord {
    /// The headers a timer record adds (design §1.1). The source coordinates use the
    /// dead-letter records' names (``OutputRecords/Header``).
    public enum Header {
        public static let version = "pushbridge-timer-v"
        public static let id = "pushbridge-timer-id"
        public static let due = "pushbridge-timer-due"
        public static let release = "pushbridge-timer-release"
        public static let reason = "pushbridge-timer-reason"
        public static let push = "pushbridge-timer-push"
        public static let created = "pushbridge-timer-created"
        public static let hops = "pushbridge-timer-hops"
        public static let redefers = "pushbridge-timer-redefers"
        public static let targets = "pushbridge-timer-targets"
        public static let eventTimestamp = "pushbridge-event-timestamp"
        public static let sourceTopic = OutputRecords.Header.sourceTopic
        public static let sourcePartition = OutputRecords.Header.sourcePartition
        public static let sourceOffset = OutputRecords.Header.sourceOffset

        /// Whether a header is one of a timer's own: `pushbridge-timer-*`, the event timestamp,
        /// the source coordinates. A source record's header of such a name is not carried.
        public static func isReserved(_ name: String) -> Bool {
            name.hasPrefix("pushbridge-timer-") || name == eventTimestamp || name == sourceTopic || name == sourcePartition
                || name == sourceOffset
        }
    }

    /// Reads a record of the timer topic.
    ///
    /// - Throws: ``TimerRecordError`` naming the header that is missing, repeated or unreadable
    ///   (`unknown_timer_version` for a `v` this pushbridge does not know; `malformed_timer`
    ///   otherwise). Never traps on what a record says.
    public init(parsing message: KafkaMessage) throws(TimerRecordError) {
        var own: [String: String] = [:]
        var sourceHeaders: [KafkaHeader] = []
        for header in message.headers {
            guard Header.isReserved(header.name) else {
                sourceHeaders.append(header)
                continue
            }
            guard let text = header.stringValue else { throw .malformed("\(header.name) has no UTF-8 value") }
            guard own.updateValue(text, forKey: header.name) == nil else { throw .malformed("\(header.name) appears twice") }
        }
        func required(_ name: String) throws(TimerRecordError) -> String {
            guard let text = own[name] else { throw .malformed("\(name) is missing") }
            return text
        }
        func integer(_ name: String) throws(TimerRecordError) -> Int64 {
            let text = try required(name)
            guard let value = Self.decimal(text), value >= 0 else {
                throw .malformed("\(name) must be a whole number ≥ 0, got \"\(text.prefix(40))\"")
            }
            return value
        }
        let version = try required(Header.version)
        guard version == String(Self.version) else {
            throw TimerRecordError(code: .unknownVersion, description: "\(Header.version) is \"\(version.prefix(40))\"; this pushbridge reads 1")
        }
        let idText = try required(Header.id)
        guard let id = TimerID(hex: idText) else { throw .malformed("\(Header.id) must be 32 hex digits, got \"\(idText.prefix(40))\"") }
        let reasonText = try required(Header.reason)
        guard let reason = Reason(rawValue: reasonText) else {
            throw .malformed("\(Header.reason) must be send_at, quiet_hours or retry, got \"\(reasonText.prefix(40))\"")
        }
        let partition = try integer(Header.sourcePartition)
        guard partition <= Int64(Int32.max) else { throw .malformed("\(Header.sourcePartition) \(partition) is not a partition") }
        let topic = try required(Header.sourceTopic)
        guard !topic.isEmpty else { throw .malformed("\(Header.sourceTopic) is empty") }
        var timestamp: Int64?
        if let text = own[Header.eventTimestamp] {
            guard let t = Self.decimal(text) else {
                throw .malformed("\(Header.eventTimestamp) must be whole milliseconds, got \"\(text.prefix(40))\"")
            }
            timestamp = t
        }
        let hops = try integer(Header.hops)
        let redefers = try integer(Header.redefers)
        guard hops <= Int64(Int32.max), redefers <= Int64(Int32.max) else { throw .malformed("hops or redefers out of range") }
        let (due, release, created, offset) = (
            try integer(Header.due), try integer(Header.release), try integer(Header.created), try integer(Header.sourceOffset)
        )
        self.init(
            key: message.key, value: message.value, sourceHeaders: sourceHeaders, id: id, due: due, release: release, reason: reason,
            push: own[Header.push], created: created, hops: Int(hops), redefers: Int(redefers), targets: own[Header.targets],
            source: Source(topic: topic, partition: Int32(partition), offset: offset, timestamp: timestamp))
    }

    /// An optionally signed decimal of at most 19 digits, or nil (no `+`, spaces or overflow).
    static func decimal(_ text: String) -> Int64? {
        let digits = text.utf8.first == UInt8(ascii: "-") ? text.utf8.dropFirst() : text.utf8[...]
        guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}

/// Why a record of the timer topic cannot be read: a struct with an opaque code, as the
/// pipeline's other errors (the code names the dead-letter reason the engine will give it).
public struct TimerRecordError: Error, Equatable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        let name: String
        /// `pushbridge-timer-v` is not one this pushbridge reads (written by a newer one).
        public static let unknownVersion = Code(name: "unknown_timer_version")
        /// A header is missing, repeated or unreadable.
        public static let malformed = Code(name: "malformed_timer")
        public var description: String { name }
    }

    public let code: Code
    /// Which header, and what is wrong with it.
    public let description: String

    static func malformed(_ description: String) -> TimerRecordError { TimerRecordError(code: .malformed, description: description) }
}
