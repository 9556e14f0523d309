import Yams

// `cap` and `dedup` (docs/rules.md): rules whose state the consumer group shares. Loaded and
// checked here; without the rules engine (`statefulRules` false) a mapping with one is refused
// after its checks, saying why, rather than loaded and silently not applied.
extension MappingLoader {
    static let statefulRuleKeys = ["cap", "dedup"]

    mutating func loadStatefulRules(_ m: Node.Mapping, mapping: EventMapping) -> StatefulRules {
        var rules = StatefulRules()
        if let n = m["cap"] { rules.cap = cap(n, mapping) }
        if let n = m["dedup"] { rules.dedupWindow = dedup(n, maxAge: mapping.maxAge?.seconds) }
        if let n = m["cap"], mapping.rules.critical {
            warn(n, "critical bypasses caps: this cap never withholds", hint: "remove `cap`, or `critical`")
        }
        if !statefulRules {
            for name in Self.statefulRuleKeys where m[name] != nil {
                fail(
                    m[name], "`\(name)` needs the rules engine's shared state, which only `pushbridge run`'s workers keep",
                    hint: "load these mappings with the rules engine (MappingSet.load(files:statefulRules: true)); docs/rules.md")
            }
        }
        return rules
    }

    /// `cap` and `dedup` decide per event type for now: one notification per event. An event
    /// type whose `variants` or `pushes` have them is refused, saying so.
    mutating func refuseStatefulRules(_ m: EventMapping, _ node: Node, in kind: String) {
        if m.digest != nil {
            fail(
                node, "`digest` does not apply within `\(kind)` yet: a digest is one push per window",
                hint: "give the digested push an event type of its own")
        }
        guard statefulRules, !m.stateful.isEmpty else { return }
        fail(
            node, "`cap` and `dedup` do not apply within `\(kind)` yet: one event type, one notification",
            hint: "give the capped or deduplicated push an event type of its own")
    }

    /// `{max: 3, per: 1h, by: [user, category], over: skip}`.
    private mutating func cap(_ node: Node, _ mapping: EventMapping) -> StatefulRules.Cap? {
        guard let m = node.mapping else {
            fail(node, "cap must be `{max: 3, per: 1h, by: [user, category]}`")
            return nil
        }
        checkKeys(m, allowed: ["max", "per", "by", "over"], in: "cap")
        let max = m["max"].flatMap { n -> Int? in
            guard let value = n.scalar.flatMap({ Int($0.string) }), StatefulRules.maxima.contains(value) else {
                fail(n, "cap.max must be a whole number from 1 to 1000", hint: "how many pushes per window")
                return nil
            }
            return value
        }
        if m["max"] == nil { fail(node, "cap has no `max`", hint: "how many pushes per window: max: 3") }
        let per = m["per"].flatMap { window($0, "cap.per") }
        if m["per"] == nil { fail(node, "cap has no `per`", hint: "the sliding window: per: 1h") }
        let by = m["by"].flatMap { capKey($0, mapping) }
        if m["by"] == nil { fail(node, "cap has no `by`", hint: "what is counted: by: [user] or by: [user, category]") }
        var over = StatefulRules.Cap.Over.skip
        if let n = m["over"] {
            if let value = n.scalar.flatMap({ StatefulRules.Cap.Over(rawValue: $0.string) }) {
                over = value
            } else {
                fail(n, "cap.over must be `skip` or `dead-letter`")
            }
        }
        if case .devices = mapping.target, mapping.rules.user == nil {
            fail(node, "a cap counts one user's or one device's pushes, and this push goes to a list of devices", hint: "add `user: {field: …}`")
            return nil
        }
        guard let max, let per, let by else { return nil }
        return StatefulRules.Cap(max: max, per: per, by: by, over: over)
    }

    /// `by: [user, category]`: no repeats, `user` or `device` in it, and what each needs.
    private mutating func capKey(_ node: Node, _ mapping: EventMapping) -> [StatefulRules.Cap.Dimension]? {
        let items = node.sequence.map(Array.init) ?? []
        guard !items.isEmpty else {
            fail(node, "cap.by must be a list of user, category, mapping, device", hint: "by: [user] or by: [user, category]")
            return nil
        }
        var by: [StatefulRules.Cap.Dimension] = []
        for item in items {
            guard let dimension = item.scalar.flatMap({ StatefulRules.Cap.Dimension(rawValue: $0.string) }) else {
                fail(item, "cap.by: \"\(item.scalar?.string ?? "?")\" is not user, category, mapping or device")
                return nil
            }
            guard !by.contains(dimension) else {
                fail(item, "cap.by names \(dimension.rawValue) twice")
                return nil
            }
            by.append(dimension)
        }
        if !by.contains(.user), !by.contains(.device) {
            fail(node, "cap.by must count per user or per device", hint: "add user (or device): without it every user would share one count")
        }
        if by.contains(.category), mapping.rules.category == nil {
            fail(node, "cap.by counts per category, and this mapping has no `category`", hint: "add `category: …`, or leave category out of by")
        }
        var hasUser = mapping.rules.user != nil
        if case .user = mapping.target { hasUser = true }
        if by.contains(.user), !hasUser {
            fail(node, "cap.by counts per user, and this push does not say whose it is", hint: "add `user: {field: /user_id}`, or target the user")
        }
        return by
    }

    /// `true`, `false`, or `{window: 24h}`.
    private mutating func dedup(_ node: Node, maxAge: Int?) -> Int? {
        switch node.scalar?.string {
        case "true": return StatefulRules.defaultDedupWindow(maxAge: maxAge)
        case "false": return nil
        default: break
        }
        guard let m = node.mapping else {
            fail(node, "dedup must be `true` or `{window: 24h}`")
            return nil
        }
        checkKeys(m, allowed: ["window"], in: "dedup")
        guard let n = m["window"] else { return StatefulRules.defaultDedupWindow(maxAge: maxAge) }
        return window(n, "dedup.window")
    }

    /// A duration from a minute to 30 days, in seconds.
    private mutating func window(_ node: Node, _ what: String) -> Int? {
        guard let seconds = node.scalar.flatMap({ Self.parseDuration($0.string) }), StatefulRules.windows.contains(seconds) else {
            fail(node, "\(what) \"\(node.scalar?.string ?? "?")\" is not a duration from 1m to 30d", hint: "write 15m, 1h, 1d")
            return nil
        }
        return seconds
    }
}
