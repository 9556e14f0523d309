import Kafka
import Testing

@testable import Pipeline

/// Cancellations of waiting pushes (``TimerCancel``, ``TimerCancelSet``) and the listing of a
/// subject's timers (``PendingTimers``), without I/O: the cancel topic's records round-trip, a
/// record that is none is refused naming why, a subject's cancellation covers only what was
/// scheduled before it, and each ends with its lifetime.
@Suite("Timer cancellations and the pending list")
struct TimerCancelTests {
    static let now: Int64 = 1_795_000_000_000

    static func timer(user: String, offset: Int64, created: Int64, push: String? = nil) -> TimerRecord {
        let source = KafkaMessage(
            topic: "events", partition: 1, offset: offset, key: Array(user.utf8), value: Array(#"{"type":"reminder"}"#.utf8), headers: [],
            timestamp: nil)
        return TimerRecord.scheduling(
            source, subject: Array(user.utf8), due: created + 3_600_000, reason: .sendAt, push: push, level: 5, ladder: TimerLadder(),
            now: created)
    }

    @Test("a cancellation of a subject or of one ID round-trips through its record")
    func roundTrip() throws {
        let id = Self.timer(user: "42", offset: 7, created: Self.now).id
        for scope in [TimerCancel.Scope.subject(Array("42".utf8)), .id(id)] {
            let cancel = TimerCancel(scope: scope, before: Self.now, reason: "account deleted")
            let record = cancel.record(topic: "cancels")
            #expect(record.timestamp == Self.now)
            #expect(try TimerCancel(key: record.key, value: record.value) == cancel)
            #expect(cancel.until == Self.now + TimerCancel.lifetimeMilliseconds)
        }
        #expect(String(decoding: TimerCancel(scope: .id(id), before: 1, reason: "").key, as: UTF8.self) == "id:\(id.hex)")
        #expect(String(decoding: TimerCancel(scope: .subject(Array("u-1".utf8)), before: 1, reason: "").key, as: UTF8.self) == "user:u-1")
    }

    @Test(
        "a record that is no cancellation is refused naming why",
        arguments: [
            (nil, #"{"before":1,"until":2}"#, "no key"),
            ("other:42", #"{"before":1,"until":2}"#, "neither"),
            ("id:xyz", #"{"before":1,"until":2}"#, "32 hex digits"),
            ("user:42", "not json", "not JSON"),
            ("user:42", #"{"before":"1","until":2}"#, "integer before and until"),
            ("user:42", #"{"before":3,"until":2}"#, "until ≥ before"),
        ] as [(String?, String, String)])
    func unreadable(key: String?, value: String, why: String) {
        #expect {
            _ = try TimerCancel(key: key.map { Array($0.utf8) }, value: Array(value.utf8))
        } throws: { error in
            (error as? TimerCancel.Unreadable)?.description.contains(why) == true
        }
    }

    @Test("a subject's cancellation covers its timers scheduled before it, not later ones nor other subjects'")
    func subjectCutOff() {
        var set = TimerCancelSet()
        set.add(TimerCancel(scope: .subject(Array("42".utf8)), before: Self.now, reason: "r"))
        #expect(set.cancellation(of: Self.timer(user: "42", offset: 1, created: Self.now - 1), now: Self.now + 10)?.reason == "r")
        #expect(set.cancellation(of: Self.timer(user: "42", offset: 2, created: Self.now), now: Self.now + 10) == nil, "scheduled after")
        #expect(set.cancellation(of: Self.timer(user: "43", offset: 3, created: Self.now - 1), now: Self.now + 10) == nil)
        // A later cancellation of the subject covers more; an earlier one read after it changes nothing.
        set.add(TimerCancel(scope: .subject(Array("42".utf8)), before: Self.now + 5_000, reason: "later"))
        set.add(TimerCancel(scope: .subject(Array("42".utf8)), before: Self.now - 5_000, reason: "earlier"))
        #expect(set.cancellation(of: Self.timer(user: "42", offset: 2, created: Self.now), now: Self.now + 10)?.reason == "later")
        #expect(set.count == 1)
    }

    @Test("an ID's cancellation covers that timer whenever it was scheduled, and no other")
    func byID() {
        let target = Self.timer(user: "42", offset: 1, created: Self.now + 60_000)
        var set = TimerCancelSet()
        set.add(TimerCancel(scope: .id(target.id), before: Self.now, reason: ""))
        #expect(set.cancellation(of: target, now: Self.now) != nil)
        #expect(set.cancellation(of: Self.timer(user: "42", offset: 2, created: Self.now - 1), now: Self.now) == nil)
        #expect(set.cancellation(of: Self.timer(user: "42", offset: 1, created: Self.now, push: "email"), now: Self.now) == nil, "another push")
    }

    @Test("a cancellation stops counting after its lifetime, and expire forgets it")
    func lifetime() {
        let old = Self.timer(user: "42", offset: 1, created: Self.now - 1)
        var set = TimerCancelSet()
        set.add(TimerCancel(scope: .subject(Array("42".utf8)), before: Self.now, reason: ""))
        set.add(TimerCancel(scope: .id(old.id), before: Self.now, until: Self.now + 1_000, reason: ""))
        let end = Self.now + TimerCancel.lifetimeMilliseconds
        #expect(set.cancellation(of: old, now: end) != nil)
        #expect(set.cancellation(of: old, now: end + 1) == nil)
        set.expire(now: Self.now + 2_000)
        #expect(set.count == 1, "the ID's ended")
        set.expire(now: end + 1)
        #expect(set.count == 0)
    }

    @Test("the pending list keeps one entry per timer ID (the copy with the most hops), the subject's only, soonest first")
    func pendingList() throws {
        let layout = TimerLayout(ladder: TimerLadder(levels: 8), buckets: 2)
        let a = Self.timer(user: "42", offset: 1, created: Self.now)
        var b = Self.timer(user: "42", offset: 2, created: Self.now - 600_000)
        b.due = Self.now + 60_000
        let other = Self.timer(user: "43", offset: 3, created: Self.now)
        func message(_ t: TimerRecord, level: Int, offset: Int64) -> KafkaMessage {
            let record = OutputRecords.timer(t, topic: "timers", partition: layout.partition(key: t.key, level: level), nowMilliseconds: Self.now)
            return KafkaMessage(
                topic: "timers", partition: record.partition!, offset: offset, key: record.key, value: record.value, headers: record.headers,
                timestamp: nil)
        }
        let messages = [
            message(a, level: 7, offset: 10), message(a.forwarded(release: Self.now + 1), level: 6, offset: 4), message(b, level: 5, offset: 3),
            message(other, level: 7, offset: 11), KafkaMessage(topic: "timers", partition: 0, offset: 0, key: Array("42".utf8), value: [1]),
        ]
        var cancels = TimerCancelSet()
        cancels.add(TimerCancel(scope: .id(b.id), before: Self.now, reason: "gone"))
        let pending = PendingTimers.pending(messages, subject: Array("42".utf8), cancels: cancels, now: Self.now)
        #expect(pending.map(\.timer.id) == [b.id, a.id], "soonest first; another subject's and a record that is no timer left out")
        #expect(pending.map(\.copies) == [1, 2])
        #expect(pending.last?.timer.hops == 1 && pending.last?.offset == 4, "the forwarded copy")
        #expect(pending.first?.cancelled?.reason == "gone")
        #expect(pending.last?.cancelled == nil)
    }
}
