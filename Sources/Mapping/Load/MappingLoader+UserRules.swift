import Dates
import Preferences
import Yams

// `category`, `critical` and `quiet_hours` (docs/rules.md): the rules a push to a user passes
// before it is sent. They read the user's preferences in the device registry, so they need a
// `user` target.
extension MappingLoader {
    static let userRuleKeys = ["category", "critical", "quiet_hours"]

    mutating func loadUserRules(_ m: Node.Mapping, target: MappingTarget?) -> UserRules {
        var rules = UserRules()
        if let n = m["category"] {
            if let name = n.scalar?.string, NotificationCategory.isValid(name) {
                rules.category = name
            } else {
                fail(n, "category \"\(n.scalar?.string ?? "?")\" is not a category name", hint: "write a literal: \(NotificationCategory.syntax)")
            }
        }
        if let n = m["critical"] { rules.critical = bool(n) ?? false }
        if let n = m["quiet_hours"] { (rules.quietHours, rules.deferInQuietHours) = quietHours(n) }
        let judged = Self.userRuleKeys.filter { m[$0] != nil }
        switch target {
        case .user?:
            if let n = m["user"] {
                fail(n, "`user` names whose preferences apply, and the target names the user already", hint: "remove it")
            }
        case .device?, .devices?:
            if let n = m["user"] {
                rules.user = source(n, "user")
                if case .eventID? = rules.user { fail(n, "user cannot be the event's ID", hint: "`{field: /pointer}` to the user ID") }
                if judged.isEmpty {
                    warn(
                        n, "`user` names whose preferences apply, and this mapping has no rule that reads them",
                        hint: "add a `category` or `quiet_hours`, or remove it")
                }
            } else {
                for name in judged {
                    fail(
                        m[name], "`\(name)` applies a user's preferences, and this push does not say whose",
                        hint:
                            "add `user: {field: /user_id}` (the user the devices belong to; their preferences are in the device registry), or target the user"
                    )
                }
            }
        case .topic?, .condition?:
            for name in judged + (m["user"] != nil ? ["user"] : []) {
                fail(
                    m[name], "`\(name)` applies one user's preferences, and a topic or condition push goes to many",
                    hint: "send to the users' devices (`target: {user: …}`, or `fid`/`token` with `user:`)")
            }
        case nil: break
        }
        if rules.critical, rules.category == nil, rules.quietHours == nil, let n = m["critical"] {
            warn(n, "`critical: true` bypasses mutes and quiet hours, and this mapping has neither", hint: "remove it, or add a `category`")
        }
        return rules
    }

    /// `{from: "22:00", to: "07:30"}` (with `outside: skip` or `defer`), or `user`; and whether
    /// a push inside them waits until they end.
    private mutating func quietHours(_ node: Node) -> (UserRules.QuietHours?, defer: Bool) {
        if node.scalar?.string == "user" { return (.usersOwn, false) }
        guard let m = node.mapping else {
            fail(node, "quiet_hours must be `{from: \"22:00\", to: \"07:30\"}` or `user`", hint: "user: only the quiet hours each user set")
            return (nil, false)
        }
        checkKeys(m, allowed: ["from", "to", "outside"], in: "quiet_hours")
        var deferred = false
        if let n = m["outside"] {
            switch n.scalar?.string {
            case "skip": break
            case "defer" where currentPush != nil:
                fail(
                    n, "quiet_hours.outside: defer does not apply within `pushes` yet: one event type, one timer",
                    hint: "use skip, or give the push that waits an event type of its own")
            case "defer": deferred = true
            default:
                fail(
                    n, "quiet_hours.outside must be `skip` or `defer`",
                    hint: "skip: withheld, counted; defer: sent when the quiet hours end (docs/timers.md)")
            }
        }
        var times: [ClockTime] = []
        for name in ["from", "to"] {
            guard let n = m[name] else {
                fail(node, "quiet_hours has no `\(name)`", hint: "write both, as local times: {from: \"22:00\", to: \"07:30\"}")
                continue
            }
            guard let time = n.scalar.flatMap({ ClockTime($0.string) }) else {
                fail(n, "quiet_hours.\(name) \"\(n.scalar?.string ?? "?")\" is not a time of day", hint: "write HH:MM, 00:00 to 23:59, in quotes")
                continue
            }
            times.append(time)
        }
        guard times.count == 2 else { return (nil, false) }
        guard let window = QuietWindow(from: times[0], to: times[1]) else {
            fail(m["to"], "quiet_hours from and to are the same time: an empty window, or the whole day?", hint: "give a window of some length")
            return (nil, false)
        }
        return (.window(window), deferred)
    }
}
