import Dates
import Kafka
import TestSupport
import Testing

@testable import Pipeline

/// Timer records (``TimerRecord``), their IDs and partitions, without I/O: the headers of issue
/// 56 design §1.1 round-trip, a malformed record is refused naming what is wrong, and a quiet-hours
/// due set across Berlin's spring-forward night is the right UTC instant.
@Suite("Timer records: headers, IDs, partitions")
struct TimerRecordTests {
    static let ladder = TimerLadder()
    static let source = KafkaMessage(
        topic: "events", partition: 3, offset: 1_234, key: Array("order-9".utf8), value: Array(#"{"type":"chat","to":"bea"}"#.utf8),
        headers: [
            KafkaHeader(name: "traceparent", string: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            KafkaHeader(name: "empty", value: nil),
        ],
        timestamp: KafkaTimestamp(milliseconds: 1_806_193_800_000, kind: .createTime))

    static func scheduled(due: Int64 = 1_806_211_800_000, push: String? = nil) -> TimerRecord {
        TimerRecord.scheduling(
            source, subject: Array("bea".utf8), due: due, reason: .quietHours, push: push, level: 14, ladder: ladder, now: 1_806_193_800_000)
    }

    /// `record` as the timer consumer reads it.
    static func read(_ record: KafkaProducerRecord, offset: Int64 = 7) -> KafkaMessage {
        KafkaMessage(
            topic: record.topic, partition: record.partition ?? -1, offset: offset, key: record.key, value: record.value, headers: record.headers,
            timestamp: record.timestamp.map { KafkaTimestamp(milliseconds: $0, kind: .createTime) })
    }

    @Test("a scheduled timer's producer record carries the source's value and headers, then its pushbridge-timer header; read back, equal")
    func roundTrip() throws {
        let timer = Self.scheduled(push: "reminder")
        let layout = TimerLayout()
        let record = OutputRecords.timer(
            timer, topic: "pushbridge.workers.timers", partition: layout.partition(key: timer.key, level: 14), nowMilliseconds: 1_806_193_800_000)
        #expect(record.key == Array("bea".utf8), "keyed by the subject")
        #expect(record.value == Self.source.value)
        #expect(record.timestamp == 1_806_193_800_000, "the write time")
        #expect(Array(record.headers.prefix(2)) == Self.source.headers, "the source's headers first")
        #expect(record.headers.dropFirst(2).map(\.name) == ["pushbridge-timer"], "then one header of the timer's own")
        let message = Self.read(record)
        #expect(
            message.header("pushbridge-timer")?.stringValue
                == "v=1 id=\(timer.id.hex) due=1806211800000 release=\(1_806_193_800_000 + 16_384_000) reason=quiet_hours"
                + " created=1806193800000 hops=0 redefers=0 source=events/3/1234 timestamp=1806193800000 push=reminder")
        let back = try TimerRecord(parsing: message)
        #expect(back == timer)
        #expect(back.sourceMessage.topic == "events" && back.sourceMessage.partition == 3 && back.sourceMessage.offset == 1_234)
        #expect(back.sourceMessage.headers == Self.source.headers && back.sourceMessage.timestamp == Self.source.timestamp)

        let next = back.forwarded(release: 1_806_210_184_000)
        let again = try TimerRecord(parsing: Self.read(OutputRecords.timer(next, topic: "t", partition: 0, nowMilliseconds: 1)))
        #expect(again.hops == 1 && again.release == 1_806_210_184_000 && again.id == timer.id && again.due == timer.due)

        var retry = Self.scheduled()
        (retry.reason, retry.targets, retry.redefers, retry.source.timestamp) = (.retry, "token:abc", 2, nil)
        #expect(try TimerRecord(parsing: Self.read(OutputRecords.timer(retry, topic: "t", partition: 0, nowMilliseconds: 1))) == retry)
    }

    @Test("a source topic of Kafka's longest name (249 characters) comes back whole, the timer's ID with it; a longer one is refused")
    func longTopic() throws {
        var source = Self.source
        source.topic = String(repeating: "com.example.notifications.", count: 9) + "events.v1"
        source.topic += String(repeating: "x", count: 249 - source.topic.count)
        let timer = TimerRecord.scheduling(source, subject: nil, due: 5_000, reason: .quietHours, level: 0, ladder: Self.ladder, now: 0)
        let back = try TimerRecord(parsing: Self.read(OutputRecords.timer(timer, topic: "t", partition: 0, nowMilliseconds: 0)))
        #expect(back.source.topic == source.topic && back.sourceMessage.topic.count == 249)
        let again = TimerRecord.scheduling(back.sourceMessage, subject: nil, due: 9_000, reason: .quietHours, level: 0, ladder: Self.ladder, now: 1)
        #expect(again.id == timer.id, "deferred again from the record read back: the same timer")
        #expect(throws: TimerRecordError.self) {
            try TimerRecord(parsing: Self.read(Self.record(replacing: "source", with: String(repeating: "y", count: 250) + "/0/1")))
        }
    }

    @Test("a source header named like a timer's own is not carried, so a record never holds one twice")
    func reservedSourceHeaders() throws {
        var source = Self.source
        source.headers += [KafkaHeader(name: "pushbridge-timer", string: "v=1 due=1"), KafkaHeader(name: "pushbridge-timer-hops", string: "9")]
        let timer = TimerRecord.scheduling(source, subject: nil, due: 5_000, reason: .sendAt, level: 0, ladder: Self.ladder, now: 0)
        #expect(timer.sourceHeaders == Self.source.headers)
        let back = try TimerRecord(parsing: Self.read(OutputRecords.timer(timer, topic: "t", partition: 0, nowMilliseconds: 0)))
        #expect(back.due == 5_000 && back.source.topic == "events" && back.key == nil)
    }

    @Test("the ID: 32 hex digits, stable for the same source, push and reason; different otherwise")
    func ids() {
        let id = TimerID(topic: "events", partition: 3, offset: 1_234, push: nil, reason: "quiet_hours")
        #expect(id.hex.count == 32 && TimerID(hex: id.hex) == id && TimerID(hex: id.hex.uppercased()) == id)
        #expect(id == Self.scheduled().id)
        #expect(id == TimerID(topic: "events", partition: 3, offset: 1_234, push: nil, reason: "quiet_hours"))
        let others = [
            TimerID(topic: "events", partition: 3, offset: 1_235, push: nil, reason: "quiet_hours"),
            TimerID(topic: "events", partition: 31, offset: 234, push: nil, reason: "quiet_hours"),
            TimerID(topic: "events", partition: 3, offset: 1_234, push: "", reason: "quiet_hours"),
            TimerID(topic: "events", partition: 3, offset: 1_234, push: nil, reason: "send_at"),
            TimerID(topic: "event", partition: 3, offset: 1_234, push: nil, reason: "quiet_hours"),
        ]
        #expect(Set(others + [id]).count == 6)
        #expect(TimerID(hex: "0af7651916cd43dd8448eb211c80319") == nil && TimerID(hex: "0af7651916cd43dd8448eb211c80319g") == nil)
    }

    /// A scheduled timer's `pushbridge-timer` value with `field` replaced by `value`, or removed if nil.
    static func record(replacing field: String, with value: String?) -> KafkaProducerRecord {
        var record = OutputRecords.timer(Self.scheduled(push: "reminder"), topic: "t", partition: 0, nowMilliseconds: 0)
        let index = record.headers.firstIndex { $0.name == "pushbridge-timer" }!
        var fields = record.headers[index].stringValue!.split(separator: " ").map(String.init)
        fields.removeAll { $0.hasPrefix(field + "=") }
        if let value { fields.append("\(field)=\(value)") }
        record.headers[index] = KafkaHeader(name: "pushbridge-timer", string: fields.joined(separator: " "))
        return record
    }

    @Test(
        "refused, naming the field: missing, not a number, negative, too long, unknown reason or version, bad id or source",
        arguments: [
            ("v", nil, "malformed_timer", "pushbridge-timer: v is missing"),
            ("v", "2", "unknown_timer_version", "pushbridge-timer: v is \"2\""),
            ("id", "xyz", "malformed_timer", "pushbridge-timer: id must be 32 hex digits"),
            ("due", nil, "malformed_timer", "pushbridge-timer: due is missing"),
            ("due", "soon", "malformed_timer", "pushbridge-timer: due must be a whole number"),
            ("due", "-1", "malformed_timer", "pushbridge-timer: due must be a whole number ≥ 0"),
            ("release", "99999999999999999999", "malformed_timer", "pushbridge-timer: release must be"),
            ("reason", "later", "malformed_timer", "pushbridge-timer: reason must be send_at, quiet_hours or retry"),
            ("hops", "+1", "malformed_timer", "pushbridge-timer: hops must be"),
            ("hops", "4294967296", "malformed_timer", "pushbridge-timer: hops must be"),
            ("source", "events/4294967296/1", "malformed_timer", "pushbridge-timer: source must be topic/partition/offset"),
            ("source", "/3/1", "malformed_timer", "pushbridge-timer: source must be"),
            ("source", "events/3", "malformed_timer", "pushbridge-timer: source must be"),
            ("timestamp", "1.5", "malformed_timer", "pushbridge-timer: timestamp must be a whole number"),
            ("due", "", "malformed_timer", "pushbridge-timer: due must be a whole number"),
        ] as [(String, String?, String, String)])
    func malformed(field: String, value: String?, code: String, message: String) {
        let error = #expect(throws: TimerRecordError.self) { try TimerRecord(parsing: Self.read(Self.record(replacing: field, with: value))) }
        #expect(error?.code.description == code, "\(String(describing: error))")
        #expect(error?.description.hasPrefix(message) == true, "\(String(describing: error))")
    }

    @Test("a field a newer version adds is ignored; a repeated field or header, a word without =, or no header at all is refused")
    func unknownRepeatedMissing() throws {
        #expect(try TimerRecord(parsing: Self.read(Self.record(replacing: "later", with: "1"))) == Self.scheduled(push: "reminder"))
        #expect(throws: TimerRecordError.malformed("pushbridge-timer: due appears twice")) {
            var record = Self.record(replacing: "x", with: nil)
            let index = record.headers.firstIndex { $0.name == "pushbridge-timer" }!
            record.headers[index] = KafkaHeader(name: "pushbridge-timer", string: record.headers[index].stringValue! + " due=1")
            return try TimerRecord(parsing: Self.read(record))
        }
        #expect(throws: TimerRecordError.malformed("pushbridge-timer: \"soon\" is no name=value")) {
            var record = Self.record(replacing: "x", with: nil)
            let index = record.headers.firstIndex { $0.name == "pushbridge-timer" }!
            record.headers[index] = KafkaHeader(name: "pushbridge-timer", string: record.headers[index].stringValue! + " soon")
            return try TimerRecord(parsing: Self.read(record))
        }
        var twice = OutputRecords.timer(Self.scheduled(), topic: "t", partition: 0, nowMilliseconds: 0)
        twice.headers.append(twice.headers.last!)
        #expect(throws: TimerRecordError.malformed("pushbridge-timer appears twice")) { try TimerRecord(parsing: Self.read(twice)) }
        var binary = OutputRecords.timer(Self.scheduled(), topic: "t", partition: 0, nowMilliseconds: 0)
        binary.headers.append(KafkaHeader(name: "pushbridge-timer-targets", value: [0xff, 0xfe]))
        #expect(throws: TimerRecordError.malformed("pushbridge-timer-targets has no UTF-8 value")) { try TimerRecord(parsing: Self.read(binary)) }
        #expect(throws: TimerRecordError.malformed("pushbridge-timer is missing")) {
            try TimerRecord(parsing: KafkaMessage(topic: "t", partition: 0, offset: 0, value: []))
        }
    }

    @Test("partition = bucket × levels + level; a key's 18 partitions are its bucket's, in level order")
    func partitions() {
        let layout = TimerLayout(ladder: TimerLadder(levels: 18), buckets: 6)
        #expect(layout.partitionCount == 108)
        for user in ["bea", "user-1", "user-2", "Zoë", ""] {
            let key = Array(user.utf8)
            let bucket = layout.bucket(key: key)
            #expect(bucket == Murmur2.partition(key, count: 6))
            #expect(layout.partitions(key: key) == (0..<18).map { Int32(bucket * 18 + $0) })
            for level in [0, 9, 17] {
                let partition = layout.partition(key: key, level: level)
                #expect(partition == Int32(bucket * 18 + level) && layout.level(ofPartition: partition) == level)
            }
        }
        #expect(layout.bucket(key: nil) == layout.bucket(key: []))
        #expect(layout.level(ofPartition: 108) == nil && layout.level(ofPartition: -1) == nil)
        var rng = SplitMix64(seed: 6)
        let spread = Set((0..<200).map { _ in layout.bucket(key: Array("user-\(UInt32.random(in: 0...UInt32.max, using: &rng))".utf8)) })
        #expect(spread.count == 6, "users spread over every bucket")
    }

    /// 2027-03-28, Europe/Berlin: 02:00 CET becomes 03:00 CEST. A chat at 00:30Z (01:30 CET) in
    /// quiet hours 22:00–07:30 is due when they end: 07:30 CEST = 05:30Z, not 06:30Z.
    @Test("a quiet-hours due across Berlin's spring-forward night is 05:30Z, reached in 5 hops and kept through the record")
    func dueAcrossSpringForward() throws {
        let berlin = try #require(TimeZoneDatabase.shared.zone(named: "Europe/Berlin"))
        let (from, to) = (ClockTime("22:00"), ClockTime("07:30"))
        let window = try #require(from.flatMap { from in to.flatMap { QuietWindow(from: from, to: $0) } })
        let event = try #require(RFC3339.parseMilliseconds("2027-03-28T00:30:00Z"))
        let end = try #require(window.end(containing: event / 1000, in: berlin))
        let due = end * 1000
        #expect(RFC3339.format(milliseconds: due) == "2027-03-28T05:30:00.000Z")
        #expect(Self.ladder.hops(due: due, from: event) == [14, 10, 9, 6, 4])
        guard case .forward(let level, let release) = Self.ladder.next(due: due, now: event) else {
            Issue.record("a 5 h defer is forwarded")
            return
        }
        let timer = TimerRecord.scheduling(
            Self.source, subject: Array("bea".utf8), due: due, reason: .quietHours, level: level, ladder: Self.ladder, now: event)
        #expect(timer.release == release && RFC3339.format(milliseconds: release) == "2027-03-28T05:03:04.000Z")
        let back = try TimerRecord(parsing: Self.read(OutputRecords.timer(timer, topic: "t", partition: 0, nowMilliseconds: event)))
        #expect(back.due == due)
        // The fall-back night (2027-10-31, 03:00 CEST → 02:00 CET): 07:30 CET = 06:30Z.
        let autumn = try #require(RFC3339.parseMilliseconds("2027-10-31T00:30:00Z"))
        #expect(window.end(containing: autumn / 1000, in: berlin).map { RFC3339.format(milliseconds: $0 * 1000) } == "2027-10-31T06:30:00.000Z")
    }
}
