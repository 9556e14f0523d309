import Yams

/// Reads mapping files (YAML or JSON, format v1) into ``EventMapping`` values, collecting every
/// error with its file, line and column. See docs/mapping.md.
struct MappingLoader {
    var errors: [MappingLoadError] = []
    private(set) var mappings: [EventMapping] = []
    /// The event types with `variants`, each variant a whole mapping (not in ``mappings``).
    var variantSets: [VariantSet] = []
    /// The event types with `pushes`.
    var pushSets: [PushSet] = []
    /// The name of the push being loaded, for `{from: push_id}`.
    var currentPush: String?
    /// Loading a digest's `many`: `{digest: …}` args are allowed.
    var digestValuesAllowed = false
    private(set) var format: EventFormat?
    private var formatDefinedAt: String?
    private var definedAt: [String: String] = [:]
    private(set) var file = ""
    /// Collapse keys that may be per event, judged once the event format is known.
    var collapseKeys: [(file: String, line: Int, column: Int, source: ValueSource)] = []
    /// A fixed ttl longer than max_age, found while loading.
    /// What loads but is likely a mistake, found while reading (more come once the event format
    /// is known: ``warnings(format:)``).
    var loadWarnings: [MappingLoadError] = []
    /// Whether the worker runs the rules engine that `cap` and `dedup` need; without it a
    /// mapping with either is refused.
    var statefulRules = false

    static let topKeys = ["version", "event", "events"]
    static let eventKeys = [
        "target", "title", "subtitle", "body", "platforms", "ttl", "priority", "collapse_key", "replace_id", "silent", "android", "apns", "data",
        "analytics_label", "max_age", "occurred_at", "event_time", "too_old", "project", "image", "interruption", "relevance",
        "badge", "web", "fcm", "activity", "category", "critical", "quiet_hours", "user", "cap", "dedup", "send_at", "digest",
        "many",
    ]
    static let targetKinds = ["fid", "fids", "token", "tokens", "topic", "condition", "user"]
    /// A `user` target's filters.
    static let userFilters = ["platform", "app"]

    mutating func load(file: String, contents: String) {
        self.file = file
        let root: Node?
        do {
            root = try Yams.compose(yaml: contents)
        } catch let error as YamlError {
            errors.append(yamlError(error))
            return
        } catch {
            errors.append(MappingLoadError(file: file, line: 1, column: 1, message: "cannot parse: \(error)"))
            return
        }
        guard let root, let top = mapping(root, "the file") else {
            if root == nil { fail(nil, "the file is empty", hint: "start with `version: 1` and an `events:` map") }
            return
        }
        checkKeys(top, allowed: Self.topKeys, in: "the file")
        if let version = top["version"] {
            if version.scalar?.string != "1" {
                fail(version, "unsupported version \(version.scalar?.string ?? "?")", hint: "this pushbridge reads `version: 1`")
            }
        } else {
            fail(root, "missing `version`", hint: "add `version: 1`")
        }
        if let event = top["event"] { loadEventFormat(event) }
        guard let events = top["events"] else {
            fail(root, "missing `events`", hint: "add an `events:` map from event type to mapping")
            return
        }
        guard let eventMap = mapping(events, "`events`") else { return }
        for (key, value) in eventMap {
            guard let type = key.scalar?.string, !type.isEmpty else {
                fail(key, "an event type must be a non-empty string")
                continue
            }
            let here = "\(file):\(key.mark?.line ?? 0)"
            if let first = definedAt[type] {
                fail(key, "duplicate event type \"\(type)\"", hint: "first defined at \(first); each event type has exactly one mapping")
                continue
            }
            definedAt[type] = here
            if let m = value.mapping, m["pushes"] != nil {
                if let set = loadPushes(type, key: key, m) { pushSets.append(set) }
            } else if let m = value.mapping, m["variants"] != nil || m["unmatched"] != nil {
                if let set = loadVariants(type, key: key, m) { variantSets.append(set) }
            } else if let m = loadEvent(type, key: key, value) {
                mappings.append(m)
            }
        }
    }

    // MARK: Sections

    private mutating func loadEventFormat(_ node: Node) {
        guard let m = mapping(node, "`event`") else { return }
        checkKeys(m, allowed: ["type", "id"], in: "`event`")
        var f = EventFormat()
        if let t = m["type"], let p = pointer(t) {
            f.typePointer = p
            f.typesSchemaRecordsByName = false
        }
        if let i = m["id"], let p = pointer(i) { f.idPointer = p }
        if let existing = format, existing != f {
            fail(
                node, "`event` settings differ from those in \(formatDefinedAt ?? "another file")",
                hint: "set `event:` in one file only, or the same in all")
            return
        }
        format = f
        formatDefinedAt = "\(file):\(node.mark?.line ?? 0)"
    }

    mutating func loadEvent(_ type: String, key: Node, _ node: Node) -> EventMapping? {
        let before = errors.count
        guard let m = mapping(node, "event \"\(type)\"") else { return nil }
        if m["activity"] != nil { return loadActivityEvent(type, key: key, m) }
        checkKeys(m, allowed: Self.eventKeys, in: "event \"\(type)\"")
        guard let targetNode = m["target"] else {
            fail(key, "event \"\(type)\" has no `target`", hint: "add `target:` with one of fid, fids, token, tokens, topic or condition")
            return nil
        }
        let target = loadTarget(targetNode)
        var mapping = EventMapping(eventType: type, file: file, line: key.mark?.line ?? 0, target: target ?? .topic(.literal("_")))
        if let n = m["title"] { mapping.title = notificationText(n, "title") }
        if let n = m["subtitle"] { mapping.subtitle = notificationText(n, "subtitle") }
        if let n = m["body"] { mapping.body = notificationText(n, "body") }
        if let n = m["silent"] { mapping.silent = bool(n) ?? false }
        if mapping.silent, mapping.title != nil || mapping.subtitle != nil || mapping.body != nil {
            fail(
                m["silent"], "a silent push has no title, subtitle or body",
                hint: "remove `title`/`subtitle`/`body`, or `silent: true`; silent pushes carry `data` only")
        }
        if !mapping.silent, mapping.title == nil, mapping.body == nil, m["title"] == nil, m["body"] == nil {
            fail(
                key, "event \"\(type)\" has neither `title` nor `body`",
                hint: "add a `title` or `body` (a text, or a `key`), or set `silent: true` for a data-only push")
        }
        if let n = m["platforms"] { mapping.platforms = platforms(n) }
        if case .user(let user, var filter) = mapping.target {
            filter.mappingPlatforms = Set(mapping.platforms.map(\.rawValue))
            mapping.target = .user(user, filter)
        }
        if let n = m["subtitle"], !mapping.platforms.contains(.ios) {
            warn(n, "`subtitle` shows only on iOS, and this push does not go to iOS", hint: "remove it, or add ios to `platforms`")
        }
        if let n = m["ttl"] { mapping.ttl = ttl(n) }
        mapping.maxAge = loadMaxAge(m, ttl: mapping.ttl)
        if let n = m["priority"] {
            switch n.scalar?.string {
            case "high": mapping.highPriority = true
            case "normal": mapping.highPriority = false
            default: fail(n, "priority must be `high` or `normal`")
            }
        }
        if let n = m["collapse_key"] { mapping.collapseKey = source(n, "collapse_key") }
        if let n = m["replace_id"] { mapping.replaceID = source(n, "replace_id") }
        loadDisplay(m, into: &mapping)
        if let n = m["android"] { mapping.android = android(n) }
        if let n = m["apns"] { mapping.apns = apns(n) }
        if let n = m["web"] { mapping.web = web(n) }
        checkPlatforms(mapping, m)
        if let n = m["data"] { mapping.data = dataMap(n) }
        if let n = m["analytics_label"] { mapping.analyticsLabel = analyticsLabel(n, "analytics_label") }
        if let n = m["project"] { mapping.project = project(n) }
        mapping.rules = loadUserRules(m, target: target)
        mapping.stateful = loadStatefulRules(m, mapping: mapping)
        if let n = m["send_at"] { mapping.sendAt = loadSendAt(n, mapping) }
        mapping.digest = loadDigest(type, key: key, m, mapping)
        refuseSendAtWithStatefulRules(mapping, m)
        checkCollapseIDs(mapping, m)
        if mapping.silent { checkSilent(m) }
        if let collapse = mapping.collapseKey, let n = m["collapse_key"] {
            collapseKeys.append((file, n.mark?.line ?? 1, n.mark?.column ?? 1, collapse))
        }
        if let n = m["fcm"] { loadOverlay(n, m, into: &mapping) }  // last: checked against what the other keys render
        return errors.count == before && target != nil ? mapping : nil
    }

    /// `project`: a name of the config's `fcm.projects` (checked when the worker starts), or an
    /// event field holding one.
    private mutating func project(_ node: Node) -> ValueSource? {
        guard let source = source(node, "project") else { return nil }
        switch source {
        case .literal(let name), .field(_, .some(let name)):
            guard ProjectName.isValid(name) else {
                fail(node, "project \"\(name)\" is not a project name", hint: "name one of the config's fcm.projects: letters, digits, - _ .")
                return nil
            }
        case .eventID, .pushID, .digest:
            fail(node, "project cannot be the event's ID", hint: "name one of the config's fcm.projects, or `{field: /pointer}`")
            return nil
        case .field: break
        }
        return source
    }

    /// Default derivation: Android resource names are lower_snake, iOS keys UPPER_SNAKE.
    static func androidKey(_ key: String) -> String { key.lowercased() }
    static func iosKey(_ key: String) -> String { key.uppercased() }

    mutating func keyString(_ node: Node) -> String? {
        guard let s = node.scalar?.string, !s.isEmpty, !s.contains(where: { $0.isWhitespace }) else {
            fail(node, "a localization key must be a non-empty string without spaces")
            return nil
        }
        return s
    }

    private mutating func platforms(_ node: Node) -> Set<Platform> {
        guard let list = node.sequence, !list.isEmpty else {
            fail(node, "`platforms` must be a non-empty list of android, ios, web")
            return [.android, .ios]
        }
        var result = Set<Platform>()
        for item in list {
            if let p = item.scalar.flatMap({ Platform(rawValue: $0.string) }) {
                result.insert(p)
            } else {
                fail(item, "unknown platform \"\(item.scalar?.string ?? "?")\"", hint: "use android, ios or web")
            }
        }
        return result
    }

    mutating func ttl(_ node: Node) -> EventMapping.TTL? {
        if node.scalar?.string == "remaining" { return .remaining }  // checked with max_age
        guard let text = node.scalar?.string, let seconds = Self.parseDuration(text) else {
            fail(
                node, "ttl \"\(node.scalar?.string ?? "?")\" is not a duration",
                hint: "write seconds (3600), or 30s, 15m, 1h, 2d, 1w; or `remaining` for what is left of max_age")
            return nil
        }
        guard seconds <= FCMLimits.maxTTLSeconds else {
            fail(node, "ttl \(text) is over FCM's maximum of 4 weeks (2419200s)", hint: "use at most 4w")
            return nil
        }
        return .seconds(seconds)
    }

    /// `3600`, `3600s`, `15m`, `1h`, `2d`, `1w` → seconds.
    static func parseDuration(_ text: String) -> Int? {
        let units: [Character: Int] = ["s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604_800]
        var digits = text
        var factor = 1
        if let last = text.last, let f = units[last] {
            digits = String(text.dropLast())
            factor = f
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let n = Int(digits), n >= 0 else { return nil }
        let (value, overflow) = n.multipliedReportingOverflow(by: factor)
        return overflow ? nil : value
    }

    /// A `data` map (`what` names it: `data`, `android.data`, `web.data`): string values, no key
    /// FCM reserves.
    mutating func dataMap(_ node: Node, _ what: String = "data") -> [(key: String, value: ValueSource)] {
        guard let m = mapping(node, "`\(what)`") else { return [] }
        var out: [(key: String, value: ValueSource)] = []
        for (k, v) in m {
            guard let key = k.scalar?.string, !key.isEmpty else {
                fail(k, "a data key must be a non-empty string")
                continue
            }
            if let reserved = ReservedDataKey(key) {
                switch reserved {
                case .refused:
                    fail(k, "data key \"\(key)\" is reserved by FCM", hint: ReservedDataKey.refusedHint)
                    continue
                case .droppedOnAndroid:
                    warn(
                        k, "data key \"\(key)\" never reaches an Android app: its SDK drops it from RemoteMessage.getData()",
                        hint: "rename it (iOS and web apps still get it); FCM's own collapse key is the mapping's `collapse_key`")
                }
            }
            if let s = source(v, "\(what).\(key)") { out.append((key, s)) }
        }
        return out
    }

    // MARK: Values

    /// A plain scalar is a literal; `{field: /ptr, default: x}`, `{value: x}` or `{from: event_id}`.
    mutating func source(_ node: Node, _ what: String) -> ValueSource? {
        if let s = node.scalar { return .literal(s.string) }
        guard let m = node.mapping else {
            fail(node, "\(what) must be a string, `{field: /pointer}`, `{value: ...}` or `{from: event_id}`")
            return nil
        }
        checkKeys(m, allowed: ["field", "default", "value", "from", "digest"], in: what)
        let kinds = ["field", "value", "from", "digest"].filter { m[$0] != nil }
        guard kinds.count == 1 else {
            fail(node, "\(what) must have exactly one of `field`, `value` or `from`" + (digestValuesAllowed ? " (or `digest`)" : ""))
            return nil
        }
        if let d = m["digest"] { return digestValue(d) }
        if let v = m["value"] {
            guard let s = v.scalar?.string else {
                fail(v, "`value` must be a string")
                return nil
            }
            return .literal(s)
        }
        if let f = m["from"] {
            switch (f.scalar?.string, currentPush) {
            case ("event_id", _): return .eventID
            case ("push_id", let push?): return .pushID(push)
            case ("push_id", nil):
                fail(f, "`from: push_id` is the event's ID and a push's name: it needs `pushes`", hint: "use `{from: event_id}`")
                return nil
            default:
                fail(f, "`from` supports only `event_id`" + (currentPush == nil ? "" : " and `push_id`"))
                return nil
            }
        }
        guard let p = pointer(m["field"]!) else { return nil }
        if let d = m["default"], d.scalar == nil { fail(d, "`default` must be a string") }
        return .field(p, default: m["default"]?.scalar?.string)
    }

    mutating func pointer(_ node: Node) -> JSONPointer? {
        guard let text = node.scalar?.string, let p = JSONPointer(text), !text.isEmpty else {
            fail(
                node, "\"\(node.scalar?.string ?? "?")\" is not a JSON Pointer",
                hint: "write an RFC 6901 pointer such as /user/name (escape ~ as ~0 and / as ~1)")
            return nil
        }
        return p
    }

    mutating func bool(_ node: Node) -> Bool? {
        switch node.scalar?.string {
        case "true": return true
        case "false": return false
        default:
            fail(node, "expected true or false")
            return nil
        }
    }

    mutating func mapping(_ node: Node, _ what: String) -> Node.Mapping? {
        guard let m = node.mapping else {
            fail(node, "\(what) must be a map")
            return nil
        }
        return m
    }

    mutating func checkKeys(_ m: Node.Mapping, allowed: [String], in what: String) {
        var seen = Set<String>()
        for key in m.keys {
            let name = key.scalar?.string ?? "?"
            if !allowed.contains(name) {
                fail(key, "unknown field `\(name)` in \(what)", hint: "allowed: " + allowed.joined(separator: ", "))
            } else if !seen.insert(name).inserted {
                fail(key, "`\(name)` is given twice in \(what)")
            }
        }
    }

    /// What loads but is likely a mistake, at `node`'s line and column.
    mutating func warn(_ node: Node, _ message: String, hint: String? = nil) {
        loadWarnings.append(
            MappingLoadError(
                file: file, line: node.mark?.line ?? 1, column: node.mark?.column ?? 1, message: message, hint: hint, severity: .warning))
    }

    mutating func fail(_ node: Node?, _ message: String, hint: String? = nil) {
        errors.append(MappingLoadError(file: file, line: node?.mark?.line ?? 1, column: node?.mark?.column ?? 1, message: message, hint: hint))
    }

    private func yamlError(_ error: YamlError) -> MappingLoadError {
        switch error {
        case .scanner(_, let problem, let mark, _), .parser(_, let problem, let mark, _), .composer(_, let problem, let mark, _):
            return MappingLoadError(file: file, line: mark.line, column: mark.column, message: "invalid YAML: \(problem)")
        default:
            return MappingLoadError(file: file, line: 1, column: 1, message: "invalid YAML: \(error)")
        }
    }
}
