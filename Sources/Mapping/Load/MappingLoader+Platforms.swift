import Yams

// The `android`, `apns` and `web` blocks (docs/mapping.md, *Per-platform options*): what one
// platform is sent, checked at load. Values FCM types as booleans or enums are literals here;
// one taken from the event goes in the `fcm:` overlay.
extension MappingLoader {
    static let androidKeys = [
        "channel_id", "sound", "tag", "click_action", "icon", "color", "image", "title", "body", "priority", "ttl", "collapse_key",
        "notification_count", "visibility", "event_time", "sticky", "local_only", "direct_boot_ok", "ticker", "notification_priority",
        "restricted_package_name", "data", "analytics_label",
    ]
    static let apnsKeys = [
        "badge", "sound", "category", "thread_id", "mutable_content", "title", "subtitle", "body", "priority", "ttl", "collapse_id",
        "target_content_id", "filter_criteria", "image", "analytics_label",
    ]
    static let webKeys = [
        "title", "body", "image", "icon", "badge", "link", "tag", "require_interaction", "renotify", "silent", "lang", "dir", "urgency",
        "ttl", "topic", "data", "analytics_label",
    ]

    mutating func android(_ node: Node) -> EventMapping.AndroidOptions {
        var o = EventMapping.AndroidOptions()
        guard let m = mapping(node, "`android`") else { return o }
        checkKeys(m, allowed: Self.androidKeys, in: "`android`")
        o.channelID = m["channel_id"].flatMap { source($0, "android.channel_id") }
        o.sound = m["sound"].flatMap { source($0, "android.sound") }
        o.tag = m["tag"].flatMap { source($0, "android.tag") }
        o.clickAction = m["click_action"].flatMap { source($0, "android.click_action") }
        o.icon = m["icon"].flatMap { source($0, "android.icon") }
        o.image = m["image"].flatMap { source($0, "android.image") }
        if let c = m["color"], let s = source(c, "android.color") {
            if case .literal(let text) = s, !EventMapping.isColor(text) { fail(c, "color \"\(text)\" is not #rrggbb") }
            o.color = s
        }
        o.title = m["title"].flatMap { notificationText($0, "android.title") }
        o.body = m["body"].flatMap { notificationText($0, "android.body") }
        if let n = m["priority"] { o.highPriority = highPriority(n, "android.priority") }
        if let n = m["ttl"] { o.ttl = ttl(n) }
        o.collapseKey = m["collapse_key"].flatMap { source($0, "android.collapse_key") }
        o.notificationCount = m["notification_count"].flatMap { count($0, "android.notification_count") }
        if let n = m["visibility"] {
            o.visibility = symbol(n, "android.visibility", [("private", "PRIVATE"), ("public", "PUBLIC"), ("secret", "SECRET")])
        }
        if let n = m["event_time"] { o.eventTime = timeField(n, "android.event_time") }
        o.sticky = m["sticky"].flatMap { bool($0) }
        o.localOnly = m["local_only"].flatMap { bool($0) }
        o.directBootOK = m["direct_boot_ok"].flatMap { bool($0) }
        o.ticker = m["ticker"].flatMap { source($0, "android.ticker") }
        if let n = m["notification_priority"] {
            let names = ["min", "low", "default", "high", "max"]
            o.notificationPriority = symbol(n, "android.notification_priority", names.map { ($0, "PRIORITY_" + $0.uppercased()) })
        }
        if let n = m["restricted_package_name"] {
            o.restrictedPackageName = n.scalar?.string
            if (n.scalar?.string ?? "").isEmpty { fail(n, "android.restricted_package_name must be an application ID such as com.example.app") }
        }
        if let n = m["data"] { o.data = dataMap(n, "android.data") }
        if let n = m["analytics_label"] { o.analyticsLabel = analyticsLabel(n, "android.analytics_label") }
        return o
    }

    mutating func apns(_ node: Node) -> EventMapping.APNSOptions {
        var o = EventMapping.APNSOptions()
        guard let m = mapping(node, "`apns`") else { return o }
        checkKeys(m, allowed: Self.apnsKeys, in: "`apns`")
        o.badge = m["badge"].flatMap { count($0, "apns.badge") }
        if let n = m["sound"] {
            if let d = n.mapping, d["name"] != nil || d["critical"] != nil || d["volume"] != nil {
                o.criticalSound = criticalSound(n, d)
            } else {
                o.sound = source(n, "apns.sound")
            }
        }
        o.category = m["category"].flatMap { source($0, "apns.category") }
        o.threadID = m["thread_id"].flatMap { source($0, "apns.thread_id") }
        if let mc = m["mutable_content"] { o.mutableContent = bool(mc) ?? false }
        o.title = m["title"].flatMap { notificationText($0, "apns.title") }
        o.subtitle = m["subtitle"].flatMap { notificationText($0, "apns.subtitle") }
        o.body = m["body"].flatMap { notificationText($0, "apns.body") }
        if let n = m["priority"] { o.priority = symbol(n, "apns.priority", [("high", "10"), ("normal", "5"), ("low", "1")]) }
        if let n = m["ttl"] { o.ttl = ttl(n) }
        o.collapseID = m["collapse_id"].flatMap { source($0, "apns.collapse_id") }
        o.targetContentID = m["target_content_id"].flatMap { source($0, "apns.target_content_id") }
        o.filterCriteria = m["filter_criteria"].flatMap { source($0, "apns.filter_criteria") }
        o.image = m["image"].flatMap { httpsURL($0, "apns.image") }
        if let n = m["analytics_label"] { o.analyticsLabel = analyticsLabel(n, "apns.analytics_label") }
        return o
    }

    mutating func web(_ node: Node) -> EventMapping.WebOptions {
        var o = EventMapping.WebOptions()
        guard let m = mapping(node, "`web`") else { return o }
        checkKeys(m, allowed: Self.webKeys, in: "`web`")
        for (name, keyPath) in [("title", \EventMapping.WebOptions.title), ("body", \.body)] {
            guard let n = m[name], let text = notificationText(n, "web.\(name)") else { continue }
            if text.key != nil {
                fail(n, "web.\(name) cannot be a localization key: web push has none", hint: "write the text, `{field: …}` or `{text: …}`")
            }
            o[keyPath: keyPath] = text
        }
        o.image = m["image"].flatMap { httpsURL($0, "web.image") }
        o.icon = m["icon"].flatMap { httpsURL($0, "web.icon") }
        o.badge = m["badge"].flatMap { httpsURL($0, "web.badge") }
        o.link = m["link"].flatMap { httpsURL($0, "web.link") }
        o.tag = m["tag"].flatMap { source($0, "web.tag") }
        o.requireInteraction = m["require_interaction"].flatMap { bool($0) }
        o.renotify = m["renotify"].flatMap { bool($0) }
        o.silent = m["silent"].flatMap { bool($0) }
        o.lang = m["lang"].flatMap { source($0, "web.lang") }
        if let n = m["dir"] { o.dir = symbol(n, "web.dir", Self.same(["auto", "ltr", "rtl"])) }
        if let n = m["urgency"] {
            o.urgency = symbol(n, "web.urgency", Self.same(EventMapping.WebOptions.urgencies))
        }
        if let n = m["ttl"] { o.ttl = ttl(n) }
        if let n = m["topic"], let s = source(n, "web.topic") {
            if case .literal(let topic) = s, let problem = WebTopic.problem(topic) { fail(n, "web.topic: \(problem)") }
            o.topic = s
        }
        if let n = m["data"] { o.data = dataMap(n, "web.data") }
        if let n = m["analytics_label"] { o.analyticsLabel = analyticsLabel(n, "web.analytics_label") }
        return o
    }

    // MARK: Values

    /// `high` or `normal`, as `priority` takes them.
    mutating func highPriority(_ node: Node, _ what: String) -> Bool? {
        switch node.scalar?.string {
        case "high": return true
        case "normal": return false
        default:
            fail(node, "\(what) must be `high` or `normal`")
            return nil
        }
    }

    /// One of `names`' names, giving its value (the spelling FCM or Apple wants).
    mutating func symbol(_ node: Node, _ what: String, _ names: [(name: String, value: String)]) -> String? {
        if let text = node.scalar?.string, let found = names.first(where: { $0.name == text }) { return found.value }
        fail(node, "\(what) must be one of \(names.map(\.name).joined(separator: ", "))")
        return nil
    }

    /// Names that are written as they are.
    static func same(_ names: [String]) -> [(name: String, value: String)] { names.map { ($0, $0) } }

    /// An integer of at least 0 (a badge, a notification count), literal or from the event.
    mutating func count(_ node: Node, _ what: String) -> ValueSource? {
        guard let s = source(node, what) else { return nil }
        if case .literal(let text) = s, (Int(text) ?? -1) < 0 {
            fail(node, "\(what) must be an integer of at least 0, or `{field: /pointer}` to one")
        }
        return s
    }

    /// An https URL, literal (checked now) or from the event (checked per event).
    mutating func httpsURL(_ node: Node, _ what: String) -> ValueSource? {
        guard let s = source(node, what) else { return nil }
        if case .literal(let url) = s, !EventMapping.isHTTPSURL(url) {
            fail(node, "\(what) \"\(url)\" is not an https:// URL", hint: "FCM and browsers accept only HTTPS URLs here")
        }
        return s
    }

    /// `{field: /pointer}` or `{field: /pointer, unit: s}` to a time: an RFC 3339 string or an
    /// epoch number.
    mutating func timeField(
        _ node: Node, _ what: String, hint: String = "a field holding an RFC 3339 time or epoch milliseconds (add `unit: s` for seconds)"
    ) -> (pointer: JSONPointer, unit: MaxAge.EpochUnit)? {
        guard let m = node.mapping, let fieldNode = m["field"] else {
            fail(node, "`\(what)` must be `{field: /pointer}`", hint: hint)
            return nil
        }
        checkKeys(m, allowed: ["field", "unit"], in: "`\(what)`")
        guard let pointer = pointer(fieldNode) else { return nil }
        guard let u = m["unit"] else { return (pointer, .milliseconds) }
        guard let unit = u.scalar.flatMap({ MaxAge.EpochUnit(rawValue: $0.string) }) else {
            fail(u, "\(what) unit must be `ms` or `s`", hint: "the unit of a number in the field; a string is read as RFC 3339")
            return nil
        }
        return (pointer, unit)
    }

    /// An analytics label: 1–50 characters of `[a-zA-Z0-9-_.~%]` (FCM's `analytics_label`).
    mutating func analyticsLabel(_ node: Node, _ what: String) -> String? {
        let label = node.scalar?.string ?? ""
        guard !label.isEmpty, label.utf8.count <= 50, label.utf8.allSatisfy(TopicName.isTopicByte) else {
            fail(node, "\(what) must be 1-50 characters of [a-zA-Z0-9-_.~%]")
            return nil
        }
        return label
    }

    private mutating func criticalSound(_ node: Node, _ d: Node.Mapping) -> EventMapping.CriticalSound? {
        checkKeys(d, allowed: ["name", "critical", "volume"], in: "`apns.sound`")
        guard d["critical"].flatMap({ bool($0) }) == true else {
            fail(
                node, "apns.sound as a map is a critical alert's sound: it needs `critical: true`", hint: "for a plain sound write `sound: name.caf`")
            return nil
        }
        guard let nameNode = d["name"], let name = source(nameNode, "apns.sound.name") else {
            fail(node, "a critical sound needs `name` (a sound file, or `default`)")
            return nil
        }
        var volume: Double?
        if let v = d["volume"] {
            volume = v.scalar.flatMap { Double($0.string) }
            if !(0...1).contains(volume ?? -1) { fail(v, "apns.sound.volume must be a number from 0 to 1") }
        }
        warn(
            node, "a critical alert needs Apple's Critical Alerts entitlement in the app",
            hint: "without it, use a plain sound and `interruption: time-sensitive`")
        return EventMapping.CriticalSound(name: name, volume: volume)
    }

    // MARK: Across blocks

    /// What the blocks and `platforms` must agree on: a block for a platform the push does not
    /// go to is dropped (a warning); a web push needs texts web can show; one value set twice
    /// for the same field is refused.
    mutating func checkPlatforms(_ mapping: EventMapping, _ m: Node.Mapping) {
        for (name, platform) in [("android", Platform.android), ("apns", .ios), ("web", .web)] where !mapping.platforms.contains(platform) {
            guard let n = m[name] else { continue }
            warn(
                n, "`\(name)` is not sent: this push does not go to \(platform.rawValue)",
                hint: "add \(platform.rawValue) to `platforms`, or remove `\(name)`")
        }
        if mapping.platforms.contains(.web), !mapping.silent {
            for (name, shared, own) in [("title", mapping.title, mapping.web.title), ("body", mapping.body, mapping.web.body)] {
                guard own == nil, let shared, shared.key != nil, shared.text == nil, let n = m[name] else { continue }
                fail(
                    n, "web push has no localization keys, so `\(name)` shows nothing on the web",
                    hint: "add `fallback:` (the text web shows), or `web: {\(name): …}`")
            }
        }
        for (block, ttl) in [("android", mapping.android.ttl), ("apns", mapping.apns.ttl), ("web", mapping.web.ttl)]
        where ttl == .remaining && mapping.maxAge == nil {
            fail(
                m[block]?.mapping?["ttl"], "`\(block).ttl: remaining` is what is left of `max_age`, and there is none",
                hint: "add `max_age:` (e.g. 10m), or give the ttl as a duration")
        }
        if mapping.image != nil, let n = m["apns"]?.mapping?["image"] {
            fail(n, "`image` and `apns.image` are both given", hint: "`image` sets Android's, iOS's and web's; keep one")
        }
    }
}

/// RFC 8030 §5.4: a web push `Topic` is at most 32 characters of the URL- and filename-safe
/// base64 alphabet.
enum WebTopic {
    static func problem(_ topic: String) -> String? {
        guard !topic.isEmpty, topic.utf8.count <= 32 else { return "\"\(topic.prefix(40))\" is not 1 to 32 characters (RFC 8030 §5.4)" }
        let ok = topic.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D || b == 0x5F
        }
        return ok ? nil : "\"\(topic)\" has characters outside A-Z a-z 0-9 - _ (RFC 8030 §5.4)"
    }
}
