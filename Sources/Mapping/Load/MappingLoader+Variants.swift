import Yams

// `variants:` (docs/mapping.md, *Variants*): several pushes for one event type, chosen by event
// field values. Each variant is merged with the keys beside `variants` (the base) as YAML nodes,
// and the merged mapping loads as any event's does: every key an event takes works in a
// variant, and errors keep the line of the node they come from, in the base or the variant.
extension MappingLoader {
    /// Blocks merged member by member (the variant's members win); any other key of a variant
    /// replaces the base's.
    static let mergedBlocks: Set<String> = ["android", "apns", "web", "data", "fcm", "activity"]
    /// A variant's own keys, which are not mapping keys.
    static let variantKeys = ["name", "when", "default"]
    /// Read before a variant is chosen, so only beside `variants`.
    static let eventLevelKeys = ["occurred_at", "event_time"]

    /// Loads an event type's (or a push's) mapping that has `variants` (or `unmatched`); nil
    /// with errors recorded.
    mutating func loadVariants(_ type: String, key: Node, _ base: Node.Mapping) -> VariantSet? {
        let variantsKey = base.keys.first { $0.scalar?.string == "variants" }
        guard let list = base["variants"]?.sequence.map(Array.init), !list.isEmpty else {
            fail(
                variantsKey ?? key, "`variants` of event \"\(type)\" must be a non-empty list",
                hint: "each item a mapping's keys with `when:` (or `default: true`) and an optional `name:`")
            return nil
        }
        let start = errors.count
        let warningsStart = loadWarnings.count
        let collapseStart = collapseKeys.count
        var loaded: [EventMapping] = []
        var inputs: [VariantAnalysis.Input] = []
        var names: [String: Int] = [:]
        for (index, item) in list.enumerated() {
            guard let own = mapping(item, "a variant of event \"\(type)\"") else { continue }
            let (errorsBefore, warningsBefore) = (errors.count, loadWarnings.count)
            let variant = variantKeys(own, item: item, index: index, names: &names)
            inputs.append(
                VariantAnalysis.Input(label: variant.label, line: item.mark?.line ?? 0, isDefault: variant.isDefault, conditions: variant.conditions))
            if var m = loadEvent(type, key: item, .mapping(Self.merged(base: base, variant: own, mark: item.mark))) {
                refuseStatefulRules(m, item, in: "variants")
                m.variant = variant
                loaded.append(m)
            }
            // What comes from the variant's own lines names it; what comes from the base does not.
            var lines = Set<Int>()
            Self.lines(item, into: &lines)
            for i in errorsBefore..<errors.count where lines.contains(errors[i].line) { errors[i].message += " (variant \"\(variant.label)\")" }
            for i in warningsBefore..<loadWarnings.count where lines.contains(loadWarnings[i].line) {
                loadWarnings[i].message += " (variant \"\(variant.label)\")"
            }
        }
        // What the base holds is found once per variant: keep the first.
        errors = Self.unique(errors, from: start)
        loadWarnings = Self.unique(loadWarnings, from: warningsStart)
        var seen = Set<String>()
        collapseKeys = collapseKeys.enumerated().filter { i, c in i < collapseStart || seen.insert("\(c.line):\(c.column)").inserted }.map(\.element)
        if errors.count == start { analyze(type, inputs, list) }
        let unmatched = loadUnmatched(type, key: variantsKey ?? key, base, hasDefault: inputs.contains(where: \.isDefault))
        guard errors.count == start, loaded.count == list.count else { return nil }
        return VariantSet(eventType: type, variants: loaded, unmatched: unmatched)
    }

    /// A variant's own keys: `name`, `when` or `default`; and none of those only the base may set.
    private mutating func variantKeys(_ own: Node.Mapping, item: Node, index: Int, names: inout [String: Int]) -> Variant {
        var variant = Variant(name: nil, index: index, conditions: [])
        if let n = own["name"] {
            if let text = n.scalar?.string, !text.isEmpty {
                variant.name = text
                if let first = names[text] { fail(n, "variant name \"\(text)\" is used twice", hint: "first used at line \(first)") }
                names[text] = names[text] ?? item.mark?.line ?? 0
            } else {
                fail(n, "a variant's `name` must be a non-empty string")
            }
        }
        for k in Self.eventLevelKeys + ["variants", "unmatched"] {
            guard let n = own.keys.first(where: { $0.scalar?.string == k }) else { continue }
            fail(
                n, "`\(k)` cannot be set in a variant",
                hint: Self.eventLevelKeys.contains(k)
                    ? "the event's time is read before a variant is chosen: set it beside `variants`" : "set it beside `variants`")
        }
        variant.isDefault = own["default"].map { variantDefault($0) } ?? false
        switch (own["when"], variant.isDefault) {
        case (let w?, true): fail(w, "a default variant has no `when`", hint: "it takes every event no earlier variant took")
        case (let w?, false): variant.conditions = conditions(w) ?? []
        case (nil, false): fail(item, "a variant has neither `when` nor `default: true`", hint: "add `when: {field: /pointer, equals: value}`")
        case (nil, true): break
        }
        return variant
    }

    private mutating func analyze(_ type: String, _ inputs: [VariantAnalysis.Input], _ list: [Node]) {
        guard inputs.count == list.count else { return }
        for finding in VariantAnalysis.analyze(inputs) {
            let node = list[finding.variant]
            let error = MappingLoadError(
                file: file, line: node.mark?.line ?? 1, column: node.mark?.column ?? 1, message: finding.message + " (event \"\(type)\")",
                hint: finding.hint, severity: finding.severity)
            if finding.severity == .error { errors.append(error) } else { loadWarnings.append(error) }
        }
    }

    private mutating func loadUnmatched(_ type: String, key: Node, _ base: Node.Mapping, hasDefault: Bool) -> UnmatchedAction? {
        guard let n = base["unmatched"] else {
            if !hasDefault {
                fail(
                    key, "event \"\(type)\" has variants but no `unmatched`, and no default variant",
                    hint: "add `unmatched: skip` (counted) or `unmatched: dead-letter` (reason no_variant), or a last variant with `default: true`")
            }
            return nil
        }
        if hasDefault {
            fail(n, "`unmatched` beside a default variant never applies (event \"\(type)\")", hint: "remove `unmatched`, or the default variant")
            return nil
        }
        guard let action = n.scalar.flatMap({ UnmatchedAction(rawValue: $0.string) }) else {
            fail(
                n, "unmatched must be `skip` or `dead-letter`",
                hint: "skip: done without a send, counted; dead-letter: a record with reason no_variant")
            return nil
        }
        return action
    }

    private mutating func variantDefault(_ node: Node) -> Bool {
        guard node.scalar?.string == "true" else {
            fail(node, "`default` of a variant must be `true`", hint: "leave it out for a variant chosen by `when`")
            return false
        }
        return true
    }

    /// `when`: one condition, or a list of them that must all hold.
    mutating func conditions(_ node: Node) -> [VariantCondition]? {
        let items = node.sequence.map(Array.init) ?? [node]
        guard !items.isEmpty else {
            fail(node, "`when` is an empty list", hint: "give at least one `{field: /pointer, equals: value}`")
            return nil
        }
        var result: [VariantCondition] = []
        for item in items {
            guard let m = mapping(item, "a `when` condition") else { return nil }
            checkKeys(m, allowed: ["field", "equals", "one_of", "present"], in: "a `when` condition")
            guard let f = m["field"], let pointer = pointer(f) else {
                if m["field"] == nil { fail(item, "a `when` condition needs `field: /pointer`") }
                return nil
            }
            let tests = ["equals", "one_of", "present"].filter { m[$0] != nil }
            guard tests.count == 1 else {
                fail(item, "a `when` condition has exactly one of `equals`, `one_of` or `present`")
                return nil
            }
            if let e = m["equals"] {
                guard let v = literal(e) else { return nil }
                result.append(VariantCondition(pointer, .equals(v)))
            } else if let o = m["one_of"] {
                guard let list = o.sequence, !list.isEmpty else {
                    fail(o, "`one_of` must be a non-empty list of values")
                    return nil
                }
                var values: [String] = []
                for v in list {
                    guard let text = literal(v) else { return nil }
                    values.append(text)
                }
                result.append(VariantCondition(pointer, .oneOf(values)))
            } else if let p = m["present"] {
                switch p.scalar?.string {
                case "true": result.append(VariantCondition(pointer, .present(true)))
                case "false": result.append(VariantCondition(pointer, .present(false)))
                default:
                    fail(p, "`present` must be true or false")
                    return nil
                }
            }
        }
        return result
    }

    /// A value to compare with: a string, number or boolean, as written.
    /// An unquoted number or boolean is written as the stringification rule writes the event's
    /// (`2.50` → `2.5`, `1e3` → `1000`, `True` → `true`), so it equals the same value in the event;
    /// a quoted one is compared as written.
    private mutating func literal(_ node: Node) -> String? {
        guard let s = node.scalar else {
            fail(node, "a value to compare with must be a string, number or boolean")
            return nil
        }
        guard s.style == .plain else { return s.string }
        if ["null", "Null", "NULL", "~", ""].contains(s.string) {
            fail(node, "null never equals a field's value", hint: "write `present: false` for a field that is null or missing")
            return nil
        }
        if ["true", "True", "TRUE"].contains(s.string) { return "true" }
        if ["false", "False", "FALSE"].contains(s.string) { return "false" }
        switch try? JSONParser.parse(s.string) {
        case let number? where number.typeName == "integer" || number.typeName == "number": return Stringify.scalar(number) ?? s.string
        default: return s.string
        }
    }

    /// The base's keys with the variant's: a variant key replaces the base's, except in
    /// ``mergedBlocks``, merged member by member. The nodes keep their marks.
    static func merged(base: Node.Mapping, variant: Node.Mapping, mark: Mark?) -> Node.Mapping {
        let own = variant.filter { !(variantKeys + eventLevelKeys + ["variants", "unmatched"]).contains($0.key.scalar?.string ?? "") }
        return merged(base.filter { !["variants", "unmatched"].contains($0.key.scalar?.string ?? "") }, own, like: base, mark: mark)
    }

    /// `base` with `own`'s keys: one replaces the base's, except in ``mergedBlocks``, merged
    /// member by member (variants and pushes alike). The nodes keep their marks.
    static func merged(_ base: [(key: Node, value: Node)], _ own: [(key: Node, value: Node)], like: Node.Mapping, mark: Mark?) -> Node.Mapping {
        let pairs = mergedPairs(base, own) { name, b, o in
            guard mergedBlocks.contains(name), let bm = b.mapping, let om = o.mapping else { return o }
            return .mapping(Node.Mapping(mergedPairs(Array(bm), Array(om)) { _, _, o in o }, om.tag, om.style, om.mark))
        }
        return Node.Mapping(pairs, like.tag, like.style, mark)
    }

    /// `base` with each key `own` also has replaced (by `combine`) in place, then `own`'s other keys.
    static func mergedPairs(
        _ base: [(key: Node, value: Node)], _ own: [(key: Node, value: Node)], combine: (String, Node, Node) -> Node
    ) -> [(Node, Node)] {
        var taken = Set<Int>()
        var pairs: [(Node, Node)] = []
        for (k, v) in base {
            let name = k.scalar?.string
            if let i = own.indices.first(where: { !taken.contains($0) && own[$0].key.scalar?.string == name }) {
                taken.insert(i)
                pairs.append((own[i].key, combine(name ?? "", v, own[i].value)))
            } else {
                pairs.append((k, v))
            }
        }
        for (i, pair) in own.enumerated() where !taken.contains(i) { pairs.append((pair.key, pair.value)) }
        return pairs
    }

    /// Every line a node and its children are on.
    static func lines(_ node: Node, into lines: inout Set<Int>) {
        if let line = node.mark?.line { lines.insert(line) }
        if let m = node.mapping {
            for (k, v) in m {
                Self.lines(k, into: &lines)
                Self.lines(v, into: &lines)
            }
        } else if let s = node.sequence {
            for item in s { Self.lines(item, into: &lines) }
        }
    }

    /// `list` without the repeats of an earlier element at or after `start`.
    static func unique(_ list: [MappingLoadError], from start: Int) -> [MappingLoadError] {
        var kept = Array(list[..<start])
        for e in list[start...] where !kept[start...].contains(e) { kept.append(e) }
        return kept
    }
}
