/// A mapping's `max_age`: an event older than this is not sent (docs/mapping.md, *Events too
/// old to send*). A push such as "your driver is here" is worse than none once it is late.
public struct MaxAge: Sendable, Equatable {
    public var seconds: Int
    /// Where the event's time comes from.
    public var eventTime: EventTime
    /// What becomes of an event that is too old.
    public var whenTooOld: TooOldAction

    public init(seconds: Int, eventTime: EventTime = .recordTimestamp, whenTooOld: TooOldAction = .skip) {
        self.seconds = seconds
        self.eventTime = eventTime
        self.whenTooOld = whenTooOld
    }

    public enum EventTime: Sendable, Equatable {
        /// The Kafka record's timestamp (the producer's create time, or the broker's
        /// log-append time): without `occurred_at`.
        case recordTimestamp
        /// An event field: an RFC 3339 string, or a number of `unit`s since the Unix epoch.
        case field(JSONPointer, unit: EpochUnit)

        /// How a failure or a summary names it.
        public var name: String {
            switch self {
            case .recordTimestamp: "the Kafka timestamp"
            case .field(let pointer, _): pointer.description
            }
        }
    }

    public enum EpochUnit: String, Sendable, CaseIterable {
        case milliseconds = "ms"
        case seconds = "s"
    }

    public enum TooOldAction: String, Sendable, CaseIterable {
        /// Done without a send, and counted.
        case skip
        /// Done once a dead-letter record (`too_old`) is written, and counted.
        case deadLetter = "dead-letter"
    }
}

/// Whether rendering applies `max_age`: `replay --ignore-max-age` sends old events too.
public enum MaxAgeCheck: Sendable, Equatable {
    case enforce
    /// Every event is sent whatever its age, its time is not read, and `ttl: remaining` gives
    /// it the whole `max_age`, counted from now.
    case ignore
}

extension EventMapping {
    /// What `max_age` does for this event type, for `pushbridge validate`:
    /// `driver.arrived: sent only within 10m of /occurred_at; older: dead-lettered (too_old); ttl: what is left of the 10m`.
    public var maxAgeSummary: String? {
        guard let maxAge else { return nil }
        let age = EventAge.text(seconds: Int64(maxAge.seconds))
        var line = "\(eventType): sent only within \(age) of \(sendAt == nil ? maxAge.eventTime.name : "its send_at")"
        if sendAt == nil, case .field(_, .seconds) = maxAge.eventTime { line += " (epoch seconds)" }
        line += maxAge.whenTooOld == .skip ? "; older: skipped" : "; older: dead-lettered (too_old)"
        switch ttl {
        case .remaining?: line += "; ttl: what is left of the \(age)"
        case .seconds(let s)?: line += "; ttl: \(EventAge.text(seconds: Int64(s)))"
        case nil: line += "; ttl: FCM's default"
        }
        return line
    }
}
