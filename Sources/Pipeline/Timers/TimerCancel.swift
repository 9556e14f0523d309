import JSON
import Kafka
import Mapping

/// One cancellation of pending pushes (`pushbridge timers cancel`, docs/timers.md): a record of
/// the cancel topic (`timers.cancels`). Pure.
///
/// | key | cancels |
/// |---|---|
/// | `id:<32 hex digits>` | the timer with that ``TimerID`` |
/// | `user:<subject>` | every timer of that subject (the timer record's key) scheduled before `before` |
///
/// Value: `{"before": <ms>, "until": <ms>, "reason": "…"}`. `before` is when it was written
/// (a timer scheduled later is another push); `until` is when no timer it could match is left
/// (``lifetimeMilliseconds`` after `before`), after which a worker forgets it.
public struct TimerCancel: Sendable, Equatable {
    public enum Scope: Sendable, Hashable {
        case id(TimerID)
        case subject([UInt8])
    }

    public var scope: Scope
    public var before: Int64
    public var until: Int64
    /// Why, as the operator said (`--reason`): in the outcome record of each push it cancels.
    public var reason: String

    /// How long a cancellation matters: the furthest `send_at` (30 days) and three quiet-hours
    /// nights a push may be deferred again at its due time, with a day to spare.
    public static let lifetimeMilliseconds: Int64 = (Int64(SendAt.maxDelaySeconds) + 4 * 86_400) * 1_000

    public init(scope: Scope, before: Int64, until: Int64? = nil, reason: String) {
        (self.scope, self.before, self.reason) = (scope, before, reason)
        self.until = until ?? before + Self.lifetimeMilliseconds
    }

    /// Whether it cancels `timer`.
    public func matches(_ timer: TimerRecord) -> Bool {
        switch scope {
        case .id(let id): timer.id == id
        case .subject(let subject): timer.key ?? [] == subject && timer.created < before
        }
    }

    /// The record's key.
    public var key: [UInt8] {
        switch scope {
        case .id(let id): Array("id:\(id.hex)".utf8)
        case .subject(let subject): Array("user:".utf8) + subject
        }
    }

    /// The record's value.
    public var value: [UInt8] {
        JSONWriter.write(.object([("before", .int(before)), ("until", .int(until)), ("reason", .string(reason))]))
    }

    /// Why a record of the cancel topic is no cancellation.
    public struct Unreadable: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// Reads a record of the cancel topic.
    public init(key: [UInt8]?, value: [UInt8]) throws(Unreadable) {
        guard let key else { throw Unreadable(description: "no key (id:<timer id> or user:<subject>)") }
        if key.starts(with: Array("id:".utf8)) {
            guard let id = TimerID(hexDigits: key.dropFirst(3)) else { throw Unreadable(description: "the key's timer ID is not 32 hex digits") }
            scope = .id(id)
        } else if key.starts(with: Array("user:".utf8)) {
            scope = .subject(Array(key.dropFirst(5)))
        } else {
            throw Unreadable(description: "the key is neither id:<timer id> nor user:<subject>")
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(value)
        } catch {
            throw Unreadable(description: "the value is not JSON: \(error)")
        }
        guard case .int(let before) = json["before"], case .int(let until) = json["until"], until >= before else {
            throw Unreadable(description: "the value needs integer before and until (ms since 1970), until ≥ before")
        }
        (self.before, self.until, reason) = (before, until, json["reason"]?.stringValue ?? "")
    }

    /// The record for the cancel topic, stamped with its `before`.
    public func record(topic: String) -> KafkaProducerRecord {
        var record = KafkaProducerRecord(topic: topic, key: key, value: value)
        record.timestamp = before
        return record
    }
}

/// The cancellations a timer engine has read (``TimerCancel``), checked at each release. Pure.
/// Memory is proportional to the cancellations written within their lifetime (about 34 days):
/// fine for an operator's cancels, not for a service cancelling most of its reminders.
public struct TimerCancelSet: Sendable {
    private var byID: [TimerID: TimerCancel] = [:]
    /// Per subject, the latest cut-off (a later cancel covers an earlier one's timers).
    private var bySubject: [[UInt8]: TimerCancel] = [:]

    public init() {}

    public var count: Int { byID.count + bySubject.count }

    public mutating func add(_ cancel: TimerCancel) {
        switch cancel.scope {
        case .id(let id):
            if let known = byID[id], known.until >= cancel.until { return }
            byID[id] = cancel
        case .subject(let subject):
            if let known = bySubject[subject], known.before >= cancel.before { return }
            bySubject[subject] = cancel
        }
    }

    /// The cancellation that covers `timer` at `now`, if any.
    public func cancellation(of timer: TimerRecord, now: Int64) -> TimerCancel? {
        if let cancel = byID[timer.id], cancel.until >= now { return cancel }
        if let cancel = bySubject[timer.key ?? []], cancel.until >= now, cancel.matches(timer) { return cancel }
        return nil
    }

    /// Forgets cancellations whose lifetime ended before `now`.
    public mutating func expire(now: Int64) {
        byID = byID.filter { $0.value.until >= now }
        bySubject = bySubject.filter { $0.value.until >= now }
    }
}
