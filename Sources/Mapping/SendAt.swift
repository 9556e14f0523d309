import Dates

/// A mapping's `send_at` (docs/mapping.md, *Sending later*): when its push goes, if later than
/// the event is read. Until then the push waits in the timer topic (docs/timers.md); at its due
/// time the event is rendered again, so devices, mutes and `max_age` are judged when it is sent.
public enum SendAt: Sendable, Equatable {
    /// An event field: an RFC 3339 time with a zone, or a number of `unit`s since the Unix
    /// epoch (read as `occurred_at` reads one).
    case field(JSONPointer, unit: MaxAge.EpochUnit)
    /// This many seconds after the event's time (`from`: its `occurred_at`, else the Kafka
    /// timestamp), never after it is read: a re-read event gets the same due time.
    case after(seconds: Int, from: MaxAge.EventTime)

    /// The furthest ahead a push may wait (30 days): a longer `after` is refused when the
    /// mapping loads, and a field's later time is dead-lettered `send_at_too_far` per event.
    public static let maxDelaySeconds = 30 * 86_400

    /// The due time of `event` (UTC milliseconds).
    ///
    /// - Throws: ``MappingFailure/invalidValue(field:reason:)`` for a field that is no time,
    ///   ``MappingFailure/invalidEventTime(field:reason:)`` when the event's own time is missing.
    func due(_ event: DecodedEvent, recordTimestamp: Int64?) throws(MappingFailure) -> Int64 {
        switch self {
        case .field(let pointer, let unit):
            return try EventAge.fieldTime(in: event.data, at: pointer, unit: unit, role: "send_at")
        case .after(let seconds, let from):
            return try EventAge.eventTime(event, recordTimestamp: recordTimestamp, from: from) + Int64(seconds) * 1000
        }
    }

    /// How `validate` and `render` describe it: `at /remind_at`, `30m after the Kafka timestamp`.
    public var summary: String {
        switch self {
        case .field(let pointer, .seconds): "at \(pointer) (epoch seconds)"
        case .field(let pointer, .milliseconds): "at \(pointer)"
        case .after(let seconds, let from): "\(EventAge.text(seconds: Int64(seconds))) after \(from.name)"
        }
    }
}

extension EventMapping {
    /// What `send_at` does for this event type, for `pushbridge validate`:
    /// `reminder.due: sent at /remind_at (until then it waits in the timer topic)`.
    public var sendAtSummary: String? {
        sendAt.map { "\(eventType): sent \($0.summary) (until then it waits in the timer topic)" }
    }
}

/// A push that waits: rendered later, at `due`, from the same event.
public struct Deferral: Sendable, Equatable {
    /// When it is sent (UTC milliseconds).
    public var due: Int64
    /// Whose push it is, the timer record's key: the target user, else the user whose rules
    /// apply (`user:`), else the event's ID.
    public var subject: String
    public var reason: Reason

    /// Why it waits.
    public enum Reason: String, Sendable, Equatable {
        /// Its `send_at` is later.
        case sendAt = "send_at"
        /// The user's quiet hours, `outside: defer`: until they end.
        case quietHours = "quiet_hours"
    }

    public init(due: Int64, subject: String, reason: Reason = .sendAt) {
        (self.due, self.subject, self.reason) = (due, subject, reason)
    }

    /// Why a run that keeps no timers (a replay) skips it (`timer_not_armed`).
    public var notArmedReason: String {
        "it waits until \(RFC3339.format(milliseconds: due)) (\(reason.rawValue)), and this run keeps no timers"
    }
}
