import Dates

// `send_at` when rendering (docs/mapping.md, *Sending later*): decided before any device
// lookup, so a push that waits reads nothing from the registry until it is due.
extension MappingSet {
    /// The mappings with `send_at` or quiet hours' `outside: defer` (a variant's included): the
    /// worker needs the timer topic.
    public var deferring: [EventMapping] { allMappings.filter { $0.sendAt != nil || $0.rules.deferInQuietHours } }

    /// Whether a push with `send_at` goes now or waits.
    enum SendTime: Sendable, Equatable {
        /// Its due time has come (UTC milliseconds): sent now, `max_age` counted from it.
        case due(Int64)
        case later(Deferral)
    }

    /// When `event`'s push goes: now if its due time is not after `now` (seconds; nil: the
    /// clock's), else later, keyed by its subject.
    func deferral(
        _ event: DecodedEvent, record: EventRecord, sendAt: SendAt, chosen: EventMapping?, now: Int64?, clock: any WallClock
    ) -> Result<SendTime, MappingFailure> {
        do throws(MappingFailure) {
            let due = try sendAt.due(event, recordTimestamp: record.timestamp)
            let instant = now.map { $0 * 1000 } ?? clock.nowMilliseconds()
            guard due > instant else { return .success(.due(due)) }
            return .success(.later(Deferral(due: due, subject: try subject(of: event, chosen: chosen))))
        } catch {
            return .failure(error)
        }
    }

    /// Whose push it is: the target user, else the user whose rules apply (`user:`), else the
    /// event's ID. Read from the event alone: the registry is read when it is due.
    private func subject(of event: DecodedEvent, chosen: EventMapping?) throws(MappingFailure) -> String {
        guard let mapping = chosen ?? mappings[event.type] else { return event.id }
        if let user = try mapping.user(in: event) { return user }
        if let source = mapping.rules.user {
            let user = try Resolver(event: event, now: nil).string(source, role: "user")
            if !user.isEmpty { return user }
        }
        return event.id
    }
}
