import Yams

// `send_at` (docs/mapping.md, *Sending later*): `{field: /remind_at}` (with `unit: s` for epoch
// seconds) or `{after: 30m}`, counted from the event's time. Loaded after `max_age`, whose
// `occurred_at` is the event's time for `after`.
extension MappingLoader {
    mutating func loadSendAt(_ node: Node, _ mapping: EventMapping) -> SendAt? {
        let hint = "`{field: /remind_at}` (an RFC 3339 time, or epoch ms; `unit: s` for seconds), or `{after: 30m}` after the event's time"
        guard let m = node.mapping else {
            fail(node, "send_at must be `{field: /pointer}` or `{after: duration}`", hint: hint)
            return nil
        }
        var sendAt: SendAt?
        if let after = m["after"] {
            checkKeys(m, allowed: ["after"], in: "`send_at`")
            guard let text = after.scalar?.string, let seconds = Self.parseDuration(text), seconds > 0 else {
                fail(after, "send_at.after \"\(after.scalar?.string ?? "?")\" is not a duration over 0", hint: "write 30s, 10m, 1h, 2d")
                return nil
            }
            guard seconds <= SendAt.maxDelaySeconds else {
                fail(after, "send_at.after \(text) is more than 30d: a timer is kept at most 30 days", hint: "write at most 30d")
                return nil
            }
            sendAt = .after(seconds: seconds, from: mapping.maxAge?.eventTime ?? .recordTimestamp)
        } else if let field = timeField(node, "send_at", hint: hint) {
            sendAt = .field(field.pointer, unit: field.unit)
        }
        if sendAt != nil, currentPush != nil {
            fail(
                node, "`send_at` does not apply within `pushes` yet: one event type, one timer",
                hint: "give the push that waits an event type of its own")
        }
        return sendAt
    }

    /// `cap` and `dedup` count sends when the rules engine decides them, and a timer's fire does
    /// not pass through it yet: refused with `send_at` or quiet hours' `outside: defer`, saying so.
    mutating func refuseSendAtWithStatefulRules(_ mapping: EventMapping, _ m: Node.Mapping) {
        guard !mapping.stateful.isEmpty else { return }
        if mapping.sendAt != nil, let n = m["send_at"] {
            fail(
                n, "`send_at` with `cap` or `dedup` is not supported yet: a push sent later does not pass the rules engine",
                hint: "remove `cap`/`dedup` from this mapping, or send it now")
        }
        if mapping.rules.deferInQuietHours, let n = m["quiet_hours"] {
            fail(
                n, "quiet_hours.outside: defer with `cap` or `dedup` is not supported yet: a push sent later does not pass the rules engine",
                hint: "use outside: skip, or remove `cap`/`dedup`")
        }
    }
}
