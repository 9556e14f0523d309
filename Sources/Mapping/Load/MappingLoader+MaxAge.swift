import Yams

// `max_age`, `occurred_at`, `too_old` and `ttl: remaining` (docs/mapping.md, *Events too old to
// send*): each checked against the others when the mapping loads, so nothing about an event's
// age is found wrong per event except the event's own time. `occurred_at` was `event_time`,
// which now loads with a warning: FCM's own `event_time` is the time an Android notification
// shows (`android.notification.event_time`), a different thing.
extension MappingLoader {
    mutating func loadMaxAge(_ m: Node.Mapping, ttl: EventMapping.TTL?) -> MaxAge? {
        guard let node = m["max_age"] else {
            for name in ["occurred_at", "event_time", "too_old"] {
                guard let n = m[name] else { continue }
                fail(n, "`\(name)` needs `max_age`", hint: "add `max_age:` (e.g. 10m), the age past which an event is not sent")
            }
            if ttl == .remaining, let n = m["ttl"] {
                fail(
                    n, "`ttl: remaining` is what is left of `max_age`, and there is none",
                    hint: "add `max_age:` (e.g. 10m), or give the ttl as a duration")
            }
            return nil
        }
        guard let text = node.scalar?.string, let seconds = Self.parseDuration(text), seconds > 0 else {
            fail(
                node, "max_age \"\(node.scalar?.string ?? "?")\" is not a duration over 0",
                hint: "write seconds (600), or 30s, 10m, 1h, 2d, 1w")
            return nil
        }
        var maxAge = MaxAge(seconds: seconds)
        if ttl == .remaining, seconds > FCMLimits.maxTTLSeconds {
            fail(
                node, "max_age \(text) is over FCM's maximum ttl of 4 weeks (2419200s), and `ttl: remaining` starts from it",
                hint: "use at most 4w, or a ttl of its own")
        }
        if case .seconds(let ttlSeconds)? = ttl, ttlSeconds > seconds, let n = m["ttl"] {
            warn(
                n,
                "ttl \(n.scalar?.string ?? "") outlives max_age \(text): a push sent in time can still reach a phone that comes online up to \(n.scalar?.string ?? "") later",
                hint: "`ttl: remaining` ends the push when max_age runs out")
        }
        if let (name, n) = occurredAt(m), let time = eventTime(n, name: name) { maxAge.eventTime = time }
        if let n = m["too_old"] {
            if let action = n.scalar.flatMap({ MaxAge.TooOldAction(rawValue: $0.string) }) {
                maxAge.whenTooOld = action
            } else {
                fail(
                    n, "too_old must be `skip` or `dead-letter`",
                    hint: "skip: done without a send, counted; dead-letter: also a dead-letter record with reason too_old")
            }
        }
        return maxAge
    }

    /// The node that says when the event happened, and the name it was given: `occurred_at`, or
    /// `event_time` as it was called before (a warning); both is an error.
    mutating func occurredAt(_ m: Node.Mapping) -> (name: String, node: Node)? {
        switch (m["occurred_at"], m["event_time"]) {
        case (let n?, nil): return ("occurred_at", n)
        case (nil, let old?):
            warn(
                old, "`event_time` is now `occurred_at`: FCM's own event_time is the time an Android notification shows",
                hint: "write `occurred_at:` with the same value")
            return ("event_time", old)
        case (_?, let old?):
            fail(old, "`event_time` and `occurred_at` are both given", hint: "`event_time` is the old name of `occurred_at`: keep `occurred_at`")
            return nil
        case (nil, nil): return nil
        }
    }

    /// `{field: /pointer}` or `{field: /pointer, unit: s}`.
    mutating func eventTime(_ node: Node, name: String) -> MaxAge.EventTime? {
        let hint = "write `{field: /occurred_at}` (an RFC 3339 string, or epoch milliseconds), or add `unit: s` for epoch seconds"
        return timeField(node, name, hint: hint).map { .field($0.pointer, unit: $0.unit) }
    }
}
