import Yams

// `pushes:` (docs/mapping.md, *Several pushes per event*): one event, several audiences, each
// with its own target, keys and options. The keys beside `pushes` are every push's defaults;
// each push is merged with them as YAML nodes (as variants are), so every mapping key works in
// a push, its own `variants` too, and errors keep the line they come from.
extension MappingLoader {
    /// A push's own keys, which are not mapping keys.
    static let pushKeys = ["name", "when"]

    /// Loads an event type whose mapping has `pushes`; nil with errors recorded.
    mutating func loadPushes(_ type: String, key: Node, _ base: Node.Mapping) -> PushSet? {
        let pushesKey = base.keys.first { $0.scalar?.string == "pushes" }
        guard let list = base["pushes"]?.sequence.map(Array.init), !list.isEmpty else {
            fail(
                pushesKey ?? key, "`pushes` of event \"\(type)\" must be a non-empty list", hint: "each item a push: `name:`, `target:` and its keys")
            return nil
        }
        for name in ["variants", "unmatched"] {
            guard let n = base.keys.first(where: { $0.scalar?.string == name }) else { continue }
            fail(n, "`\(name)` beside `pushes` is ambiguous", hint: "give each push that needs them its own `\(name)`")
        }
        let defaults = Node.Mapping(
            base.filter { !["pushes", "variants", "unmatched"].contains($0.key.scalar?.string ?? "") }, base.tag, base.style, base.mark)
        let (start, warningsStart) = (errors.count, loadWarnings.count)
        var pushes: [Push] = []
        var names: [String: Int] = [:]
        for item in list {
            guard let own = mapping(item, "a push of event \"\(type)\"") else { continue }
            let errorsBefore = errors.count
            guard let name = pushName(own, item: item, names: &names) else { continue }
            let when = own["when"].flatMap { self.conditions($0) } ?? []
            let merged = Self.merged(defaults: defaults, push: own, mark: item.mark)
            currentPush = name
            let route: Push.Route? =
                if merged["variants"] != nil || merged["unmatched"] != nil {
                    loadVariants(type, key: item, merged).map { .variants($0) }
                } else {
                    loadEvent(type, key: item, .mapping(merged)).map { m -> Push.Route in
                        refuseStatefulRules(m, item, in: "pushes")
                        return .one(m)
                    }
                }
            currentPush = nil
            // What comes from the push's own lines names it.
            var lines = Set<Int>()
            Self.lines(item, into: &lines)
            for i in errorsBefore..<errors.count where lines.contains(errors[i].line) { errors[i].message += " (push \"\(name)\")" }
            if let route { pushes.append(Push(name: name, conditions: when, route: route)) }
        }
        // What the defaults hold is found once per push: keep the first.
        errors = Self.unique(errors, from: start)
        loadWarnings = Self.unique(loadWarnings, from: warningsStart)
        warnSharedReplaceIDs(pushes, list)
        guard errors.count == start, pushes.count == list.count else { return nil }
        return PushSet(eventType: type, pushes: pushes)
    }

    /// `name`: required, unique in the event type, usable in `{from: push_id}` and metrics.
    private mutating func pushName(_ own: Node.Mapping, item: Node, names: inout [String: Int]) -> String? {
        guard let n = own["name"] else {
            fail(item, "a push has no `name`", hint: "name it (buyer, seller, …): outcome records, logs and `{from: push_id}` use it")
            return nil
        }
        guard let name = n.scalar?.string, !name.isEmpty, name.utf8.allSatisfy(TopicName.isTopicByte) else {
            fail(n, "a push's `name` must be 1 or more of [a-zA-Z0-9-_.~%]")
            return nil
        }
        if let first = names[name] {
            fail(n, "push name \"\(name)\" is used twice", hint: "first used at line \(first)")
            return nil
        }
        names[name] = item.mark?.line ?? 0
        return name
    }

    /// `replace_id: {from: event_id}` in two pushes: one push's notification would replace the
    /// other's on a device both reach.
    private mutating func warnSharedReplaceIDs(_ pushes: [Push], _ list: [Node]) {
        let byEventID = pushes.filter { $0.mappings.contains { $0.replaceID == .eventID } }
        guard byEventID.count > 1, let second = list.first(where: { $0.mapping?["name"]?.scalar?.string == byEventID[1].name }) else { return }
        warn(
            second,
            "pushes \(byEventID.map { "\"\($0.name)\"" }.joined(separator: " and ")) share replace_id {from: event_id}: on a device both reach, one replaces the other",
            hint: "use `replace_id: {from: push_id}` (the event ID and the push's name)")
    }

    /// The defaults with a push's keys: a push key replaces the default's, except in
    /// ``mergedBlocks``, merged member by member. The push's own `variants` stay.
    static func merged(defaults: Node.Mapping, push: Node.Mapping, mark: Mark?) -> Node.Mapping {
        merged(Array(defaults), push.filter { !pushKeys.contains($0.key.scalar?.string ?? "") }, like: defaults, mark: mark)
    }
}
