import Kafka

/// One record of the timer topic (issue 56 design §1.1): a source event waiting to be sent.
/// Key = the push's subject (the user ID); value = the source record's value byte for byte;
/// headers = the source record's own, then `pushbridge-timer` (``Header``). The fire renders the
/// source event again (``sourceMessage``), so devices, mappings, `max_age` and quiet hours are
/// judged when it is sent. Pure.
public struct TimerRecord: Sendable, Equatable {
    /// The header format this pushbridge writes and reads.
    public static let version = 1

    /// Why a timer was set.
    public enum Reason: String, Sendable, CaseIterable {
        /// The mapping's `send_at`.
        case sendAt = "send_at"
        /// The user's quiet hours, `outside: defer`.
        case quietHours = "quiet_hours"
        /// A send retried later (`delivery.retry_via_timers`).
        case retry
    }

    /// Where the event was first read.
    public struct Source: Sendable, Equatable {
        public var topic: String
        public var partition: Int32
        public var offset: Int64
        /// The source record's timestamp (milliseconds), when it had one: `max_age` without `occurred_at`.
        public var timestamp: Int64?

        public init(topic: String, partition: Int32, offset: Int64, timestamp: Int64?) {
            (self.topic, self.partition, self.offset, self.timestamp) = (topic, partition, offset, timestamp)
        }
    }

    /// The subject: the user ID (or target value, or event ID).
    public var key: [UInt8]?
    /// The source record's value, unchanged.
    public var value: [UInt8]
    /// The source record's headers, without any named like ours (``Header/isReserved(_:)``).
    public var sourceHeaders: [KafkaHeader]
    public var id: TimerID
    /// When it is sent (UTC milliseconds).
    public var due: Int64
    /// When the level it was written to lets it go (write time + 2^level s).
    public var release: Int64
    public var reason: Reason
    /// The push's name, for mappings with `pushes:`.
    public var push: String?
    /// When this timer was scheduled (UTC milliseconds): the event's read, or the fire at which
    /// quiet hours deferred it again.
    public var created: Int64
    /// Writes to the timer topic before this one (0: written from the source event).
    public var hops: Int
    /// Times quiet hours were found again at its due time and it was deferred again.
    public var redefers: Int
    /// Retry only: the targets still to send (opaque to the ladder).
    public var targets: String?
    public var source: Source

    public init(
        key: [UInt8]?, value: [UInt8], sourceHeaders: [KafkaHeader], id: TimerID, due: Int64, release: Int64, reason: Reason,
        push: String? = nil, created: Int64, hops: Int = 0, redefers: Int = 0, targets: String? = nil, source: Source
    ) {
        (self.key, self.value, self.sourceHeaders, self.id) = (key, value, sourceHeaders.filter { !Header.isReserved($0.name) }, id)
        (self.due, self.release, self.reason, self.push, self.created) = (due, release, reason, push, created)
        (self.hops, self.redefers, self.targets, self.source) = (hops, redefers, targets, source)
    }

    /// The first write of a timer for `message`: keyed by `subject`, released from `level` at
    /// `now + 2^level s`, its ID from the message's coordinates, `push` and `reason`.
    public static func scheduling(
        _ message: KafkaMessage, subject: [UInt8]?, due: Int64, reason: Reason, push: String? = nil, level: Int, ladder: TimerLadder,
        now: Int64
    ) -> TimerRecord {
        TimerRecord(
            key: subject, value: message.value, sourceHeaders: message.headers,
            id: TimerID(topic: message.topic, partition: message.partition, offset: message.offset, push: push, reason: reason.rawValue),
            due: due, release: now + ladder.holdMilliseconds(level: level), reason: reason, push: push, created: now,
            source: Source(topic: message.topic, partition: message.partition, offset: message.offset, timestamp: message.timestamp?.milliseconds))
    }

    /// The next hop: the same timer written again, released at `release`.
    public func forwarded(release: Int64) -> TimerRecord {
        var next = self
        next.release = release
        next.hops += 1
        return next
    }

    /// The source event as the worker first read it, for the fire's render, dead-letter and
    /// outcome records: its coordinates, value, headers and timestamp (the key is the subject's).
    public var sourceMessage: KafkaMessage {
        KafkaMessage(
            topic: source.topic, partition: source.partition, offset: source.offset, key: key, value: value, headers: sourceHeaders,
            timestamp: source.timestamp.map { KafkaTimestamp(milliseconds: $0, kind: .createTime) })
    }

    /// All headers: the source's, then ``Header/timer`` (and ``Header/targets`` for a retry).
    public var headers: [KafkaHeader] {
        var headers = sourceHeaders
        headers.reserveCapacity(sourceHeaders.count + 2)
        headers.append(KafkaHeader(name: Header.timer, string: fields))
        if let targets { headers.append(KafkaHeader(name: Header.targets, string: targets)) }
        return headers
    }
}

extension OutputRecords {
    /// A timer record to `partition` of the timer topic (``TimerLayout``), stamped with the
    /// time it is written (retention counts from the write, not from the event).
    public static func timer(_ timer: TimerRecord, topic: String, partition: Int32, nowMilliseconds: Int64) -> KafkaProducerRecord {
        var record = KafkaProducerRecord(topic: topic, key: timer.key, value: timer.value, headers: timer.headers)
        record.partition = partition
        record.timestamp = nowMilliseconds
        return record
    }
}
