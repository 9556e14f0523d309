import Yams

// An event type that drives a Live Activity (docs/mapping.md, *Live Activities*): the
// `activity:` block instead of a notification's keys. Every rule Apple or FCM states is checked
// here, so an event fails only on its own values.
extension MappingLoader {
    /// The keys an activity mapping takes beside `activity` (a notification's own keys have no
    /// meaning for it).
    static let activityEventKeys = ["target", "activity", "ttl", "max_age", "occurred_at", "event_time", "too_old", "project", "analytics_label"]
    static let activityKeys = [
        "key", "event", "token", "content_state", "attributes_type", "attributes", "request_update_token", "stale_date", "dismissal_date",
        "alert", "priority", "relevance", "min_interval",
    ]

    mutating func loadActivityEvent(_ type: String, key: Node, _ m: Node.Mapping) -> EventMapping? {
        let before = errors.count
        let what = "event \"\(type)\" (a Live Activity)"
        for k in m.keys {
            guard let name = k.scalar?.string, Self.eventKeys.contains(name), !Self.activityEventKeys.contains(name) else { continue }
            fail(
                k, "`\(name)` is a notification's: a Live Activity mapping has none",
                hint: "texts go in `activity.alert`, the rest in `activity` (docs/mapping.md, Live Activities)")
        }
        checkKeys(m, allowed: Self.activityEventKeys + Self.eventKeys.filter { !Self.activityEventKeys.contains($0) }, in: what)
        let hint =
            "a Live Activity goes to the device's FCM token or FID (`target: {token: {field: /fcm_token}}`), or starts on a user's devices (`target: {user: …}` with `token: push_to_start`)"
        let fromRegistry = m["activity"]?.mapping?["token"]?.scalar?.string == "registry"
        if fromRegistry, let targetNode = m["target"] {
            fail(targetNode, "`token: registry` sends to the devices the activity's registry entry lists: no `target`")
        }
        guard let targetNode = m["target"] ?? (fromRegistry ? m["activity"]?.mapping?["key"] : nil) else {
            fail(key, "\(what) has no `target`", hint: hint)
            return nil
        }
        // From the registry: the activity's entry is looked up as a user's devices are.
        var target = fromRegistry ? source(targetNode, "activity.key").map { MappingTarget.user($0, DeviceFilter()) } : loadTarget(targetNode)
        switch target {
        case .device?, nil: break
        case .user(let user, var filter)?:
            filter.mappingPlatforms = ["ios"]
            target = .user(user, filter)
        default: fail(targetNode, "a Live Activity goes to one device, or to a user's devices", hint: hint)
        }
        var mapping = EventMapping(eventType: type, file: file, line: key.mark?.line ?? 0, target: target ?? .topic(.literal("_")))
        mapping.platforms = [.ios]
        if let n = m["ttl"] { mapping.ttl = ttl(n) }
        if m["max_age"] != nil {
            mapping.maxAge = loadMaxAge(m, ttl: mapping.ttl)
        } else {
            // Without max_age, occurred_at still gives the timestamp.
            if let n = m["too_old"] { fail(n, "`too_old` needs `max_age`") }
            if mapping.ttl == .remaining { fail(m["ttl"], "`ttl: remaining` is what is left of `max_age`, and there is none") }
        }
        if let n = m["project"] { mapping.project = source(n, "project") }
        if let n = m["analytics_label"] { mapping.analyticsLabel = analyticsLabel(n, "analytics_label") }
        guard let n = m["activity"], let a = self.mapping(n, "`activity`") else { return nil }
        var activity = loadActivity(a, node: n)
        if let time = mapping.maxAge?.eventTime {
            activity?.eventTime = time
        } else if let (name, node) = occurredAt(m), let time = eventTime(node, name: name) {
            activity?.eventTime = time
        }
        if let activity, let target {
            switch (target, activity.token) {
            case (.user, .pushToStart):
                if activity.event != .fixed(.start) { fail(m["activity"], "`token: push_to_start` starts an activity: its `event` is start") }
            case (.user, .registry):
                if activity.event.possible.contains(.start) {
                    fail(m["activity"], "an activity's registry entry holds its update token: a start takes `token: push_to_start`")
                }
            case (.user, _): fail(targetNode, "a user's devices have push-to-start tokens only", hint: "write `token: push_to_start` in `activity`")
            case (_, .pushToStart): fail(targetNode, "`token: push_to_start` takes the tokens of a user's devices", hint: "target `user:`")
            case (_, .registry): break  // no target: refused above
            default: break
            }
        }
        mapping.activity = activity
        return errors.count == before && target != nil && activity != nil ? mapping : nil
    }

    private mutating func loadActivity(_ a: Node.Mapping, node: Node) -> LiveActivity? {
        checkKeys(a, allowed: Self.activityKeys, in: "`activity`")
        let key = required(a, "key", node, hint: "the activity's ID, e.g. `key: {field: /order_id}`: its updates are sent in order").flatMap {
            source($0, "activity.key")
        }
        let token = required(a, "token", node, hint: "Apple's activity token, e.g. `token: {field: /activity_token}`").flatMap {
            n -> LiveActivity.TokenSource? in
            if n.scalar?.string == "push_to_start" { return .pushToStart }
            if n.scalar?.string == "registry" { return .registry }
            return source(n, "activity.token").map { .value($0) }
        }
        let choice = required(a, "event", node, hint: "start, update or end, or `{field: /status, map: {…}}`").flatMap { eventChoice($0) }
        guard let key, let token, let choice else { return nil }
        var activity = LiveActivity(key: key, event: choice, token: token)
        let possible = choice.possible
        if let n = a["content_state"] { activity.contentState = object(n, "activity.content_state") }
        if activity.contentState == nil, a["content_state"] == nil, !possible.isDisjoint(with: [.start, .update]) {
            fail(node, "`activity` has no `content_state`", hint: "start and update carry the state the app's ContentState decodes")
        }
        if let n = a["stale_date"] { activity.staleDate = date(n, "activity.stale_date") }
        if let n = a["dismissal_date"] {
            activity.dismissalDate = date(n, "activity.dismissal_date")
            if !possible.contains(.end) { fail(n, "`dismissal_date` applies to an end event only") }
        }
        let start = possible.contains(.start)
        for name in ["attributes_type", "attributes", "request_update_token"] where a[name] != nil && !start {
            fail(a[name], "`\(name)` applies to a start event only (push-to-start)")
        }
        if let n = a["attributes_type"] { activity.attributesType = source(n, "activity.attributes_type") }
        if let n = a["attributes"] { activity.attributes = object(n, "activity.attributes") }
        if let n = a["request_update_token"] { activity.requestUpdateToken = bool(n) ?? true }
        if start {
            for name in ["attributes_type", "attributes", "alert"] where a[name] == nil {
                fail(
                    node, "a start needs `\(name)`",
                    hint: "push-to-start sends attributes-type, attributes and an alert (Apple, FCM's Live Activity guide)")
            }
        }
        if let n = a["alert"] { activity.alert = alert(n) }
        if let n = a["priority"] {
            switch n.scalar?.string {
            case "high": activity.highPriority = true
            case "normal": activity.highPriority = false
            default: fail(n, "priority must be `high` (apns-priority 10) or `normal` (5)")
            }
        }
        if let n = a["min_interval"] {
            if let text = n.scalar?.string, let seconds = Self.parseDuration(text), seconds > 0 {
                activity.minIntervalSeconds = seconds
            } else {
                fail(n, "min_interval must be a duration over 0 such as 10s", hint: "the least time between two pushes of one activity")
            }
        }
        if let n = a["relevance"] {
            if let d = n.scalar.flatMap({ Double($0.string) }), d.isFinite, d >= 0 {
                activity.relevance = d
            } else {
                fail(n, "relevance must be a number of at least 0", hint: "it orders the app's activities: e.g. 25, 50, 75, 100")
            }
        }
        return activity
    }

    private mutating func required(_ a: Node.Mapping, _ name: String, _ node: Node, hint: String) -> Node? {
        guard let n = a[name] else {
            fail(node, "`activity` has no `\(name)`", hint: hint)
            return nil
        }
        return n
    }

    private mutating func eventChoice(_ n: Node) -> LiveActivity.EventChoice? {
        let names = LiveActivity.Event.allCases.map(\.rawValue)
        if let s = n.scalar?.string {
            guard let e = LiveActivity.Event(rawValue: s) else {
                fail(n, "activity.event \"\(s)\" is not " + names.joined(separator: ", "), hint: "or `{field: /status, map: {…}}`")
                return nil
            }
            return .fixed(e)
        }
        guard let m = mapping(n, "activity.event"), let f = m["field"], let mapNode = m["map"] else {
            fail(n, "activity.event must be start, update or end, or `{field: /status, map: {created: start, …}}`")
            return nil
        }
        checkKeys(m, allowed: ["field", "map"], in: "activity.event")
        guard let pointer = pointer(f), let pairs = mapping(mapNode, "activity.event.map") else { return nil }
        var map: [String: LiveActivity.Event?] = [:]
        for (k, v) in pairs {
            guard let value = k.scalar?.string else { continue }
            let name = v.scalar?.string ?? ""
            if name == "skip" {
                map[value] = .some(nil)
            } else if let e = LiveActivity.Event(rawValue: name) {
                map[value] = e
            } else {
                fail(v, "activity.event.map values are " + (names + ["skip"]).joined(separator: ", "))
            }
        }
        return .field(pointer, map: map)
    }

    private mutating func object(_ n: Node, _ what: String) -> JSONTemplate? {
        guard n.mapping != nil else {
            fail(n, "\(what) must be a map (a JSON object the app decodes)")
            return nil
        }
        return jsonTemplate(n, what)
    }

    private mutating func date(_ n: Node, _ what: String) -> LiveActivity.DateSource? {
        if let m = n.mapping, let after = m["after"] {
            checkKeys(m, allowed: ["after"], in: what)
            guard let text = after.scalar?.string, let seconds = Self.parseDuration(text) else {
                fail(after, "\(what) `after` must be a duration such as 15m")
                return nil
            }
            return .after(seconds: seconds)
        }
        let hint = "`{after: 15m}` (from the event's time), or `{field: /pointer}` (RFC 3339, or epoch ms; `unit: s` for seconds)"
        return timeField(n, what, hint: hint).map { .field($0.pointer, unit: $0.unit) }
    }

    private mutating func alert(_ n: Node) -> LiveActivity.Alert? {
        guard let m = mapping(n, "activity.alert") else { return nil }
        checkKeys(m, allowed: ["title", "body", "sound"], in: "activity.alert")
        var alert = LiveActivity.Alert()
        alert.title = m["title"].flatMap { notificationText($0, "activity.alert.title") }
        alert.body = m["body"].flatMap { notificationText($0, "activity.alert.body") }
        alert.sound = m["sound"].flatMap { source($0, "activity.alert.sound") }
        for (name, text) in [("title", alert.title), ("body", alert.body)] where text?.key != nil && text?.text != nil {
            fail(
                m[name], "a Live Activity alert's \(name) is a text or a key, not both",
                hint: "its \(name) is one string or one {loc-key, loc-args}: there is no place for a fallback")
        }
        if m["title"] == nil {
            if m["body"] == nil { fail(n, "activity.alert has neither `title` nor `body`") }
            warn(n, "an alert without a title may not show (observed by OneSignal's users)", hint: "add a `title`")
        }
        return alert
    }
}
