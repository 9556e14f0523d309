import JSON
import Yams

// `digest:` and `many:` (docs/mapping.md, *Digests*; ``Digest``): `many` is compiled as a
// second mapping of the event type, its keys merged over the mapping's own as a variant's are,
// where `{digest: count}` and the other ``DigestValue``s may be args.
extension MappingLoader {
    /// What `many:` may set: what the push says and shows, not whom it goes to or when.
    static let digestManyKeys = ["title", "subtitle", "body", "data", "image", "badge", "android", "apns", "web", "analytics_label"]

    mutating func loadDigest(_ type: String, key: Node, _ m: Node.Mapping, _ mapping: EventMapping) -> Digest? {
        guard let node = m["digest"] else {
            if let many = m["many"] {
                fail(many, "`many` goes with `digest`: it is what a digest of two events or more sends", hint: "add `digest:`, or remove `many:`")
            }
            return nil
        }
        let hint = "`{window: 10m, by: [user, {field: /post/id}], first: now, actors: {field: /actor/name}}`"
        guard let d = node.mapping else {
            fail(node, "digest must be a mapping", hint: hint)
            return nil
        }
        checkKeys(d, allowed: ["window", "by", "first", "actors"], in: "`digest`")
        let before = errors.count
        var window = 0
        if let w = d["window"] {
            if let text = w.scalar?.string, let seconds = Self.parseDuration(text), Digest.windowRange.contains(seconds) {
                window = seconds
            } else {
                fail(w, "digest.window \"\(w.scalar?.string ?? "?")\" is not a duration from 10s to 24h", hint: "write 30s, 10m, 1h")
            }
        } else {
            fail(node, "digest needs a `window`", hint: hint)
        }
        let by = digestKey(d["by"])
        var first = Digest.First.hold
        if let f = d["first"] {
            if let value = f.scalar.flatMap({ Digest.First(rawValue: $0.string) }) {
                first = value
            } else {
                fail(f, "digest.first must be `hold` (every event waits for the window's end) or `now` (the first is sent at once)")
            }
        }
        var actors: JSONPointer?
        if let a = d["actors"] {
            if let am = a.mapping, let field = am["field"] {
                checkKeys(am, allowed: ["field"], in: "digest.actors")
                actors = pointer(field)
            } else {
                fail(a, "digest.actors must be `{field: /pointer}` to the actor's name")
            }
        }
        refuseBesideDigest(node, m, mapping)
        guard let manyNode = m["many"] else {
            fail(
                node, "a digest needs `many`: the keys sent for two events or more",
                hint: "`many: {body: {key: comment_digest_body, args: [{digest: count}]}}`; Android loc keys cannot be plurals")
            return nil
        }
        guard let many = loadMany(type, key: key, manyNode, m) else { return nil }
        guard errors.count == before else { return nil }
        return Digest(windowSeconds: window, by: by, first: first, actors: actors, many: many)
    }

    /// `by: [user, {field: /post/id}, …]`: the user first (the window's owner), then event fields.
    private mutating func digestKey(_ node: Node?) -> [JSONPointer] {
        guard let node else { return [] }
        guard let items = node.sequence.map(Array.init), items.first?.scalar?.string == "user" else {
            fail(node, "digest.by must be a list starting with `user`", hint: "`by: [user]`, or `by: [user, {field: /post/id}]`")
            return []
        }
        var pointers: [JSONPointer] = []
        for item in items.dropFirst() {
            guard let im = item.mapping, let field = im["field"] else {
                fail(item, "after `user`, digest.by takes `{field: /pointer}` items")
                continue
            }
            checkKeys(im, allowed: ["field"], in: "a digest.by item")
            if let p = pointer(field) { pointers.append(p) }
        }
        return pointers
    }

    /// What a digest cannot go with yet, or at all.
    private mutating func refuseBesideDigest(_ node: Node, _ m: Node.Mapping, _ mapping: EventMapping) {
        var userNamed = mapping.rules.user != nil
        if case .user = mapping.target { userNamed = true }
        if !userNamed {
            fail(node, "a digest needs a user: a `user` target, or `user:` beside a device target", hint: "its windows are per user")
        }
        // Each key only when it is on (`critical: false` and `silent: false` are fine).
        let refused: [(name: String, on: Bool, why: String)] = [
            ("critical", mapping.rules.critical, "a critical push is never held"),
            ("send_at", mapping.sendAt != nil, "a push is either sent later or digested"),
            ("silent", mapping.silent, "a digest's count is shown in its text"),
            ("cap", m["cap"] != nil, "a digest is one push per window already"),
            ("dedup", m["dedup"] != nil, "a digest is one push per window already"),
        ]
        for r in refused where r.on { fail(m[r.name], "`\(r.name)` does not go with `digest`: \(r.why)") }
        if mapping.rules.deferInQuietHours, let q = m["quiet_hours"] {
            fail(q, "quiet_hours.outside: defer does not go with `digest` yet", hint: "use outside: skip")
        }
    }

    /// `many`'s keys merged over the mapping's own (without `digest` and `many`), loaded as a
    /// mapping of its own where `{digest: …}` args are allowed.
    private mutating func loadMany(_ type: String, key: Node, _ node: Node, _ base: Node.Mapping) -> EventMapping? {
        guard let own = node.mapping else {
            fail(node, "many must be a mapping of the keys sent for two events or more (title, body, data, …)")
            return nil
        }
        checkKeys(own, allowed: Self.digestManyKeys, in: "`many`")
        let baseKeys = Array(base).filter { !["digest", "many", "variants", "unmatched"].contains($0.key.scalar?.string ?? "") }
        let merged = Self.merged(baseKeys, Array(own), like: base, mark: node.mark)
        let (wasAllowed, start) = (digestValuesAllowed, errors.count)
        digestValuesAllowed = true
        defer { digestValuesAllowed = wasAllowed }
        // Located at its `many:` key, as lint and render name it.
        let manyKey = base.keys.first { $0.scalar?.string == "many" } ?? node
        let many = loadEvent(type, key: manyKey, .mapping(merged))
        for i in start..<errors.count where !errors[i].message.hasSuffix("(many)") { errors[i].message += " (many)" }
        return many
    }

    /// `{digest: count}`: a ``DigestValue``, only within `many`.
    mutating func digestValue(_ node: Node) -> ValueSource? {
        guard digestValuesAllowed else {
            fail(
                node, "`{digest: …}` is what a digest window gathered: it goes only in `many:` of a mapping with `digest`",
                hint: "move it into `many:`")
            return nil
        }
        guard let value = node.scalar.flatMap({ DigestValue(rawValue: $0.string) }) else {
            fail(node, "digest must be one of \(DigestValue.allCases.map(\.rawValue).joined(separator: ", "))")
            return nil
        }
        return .digest(value)
    }
}
