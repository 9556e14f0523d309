/// One test of a variant's `when`: an event field compared with literals (docs/mapping.md,
/// *Variants*). The field's value is compared as the stringification rule writes it
/// (``Stringify``): `equals: 3` holds for `3` and `"3"`, `equals: true` for `true` and `"true"`.
public struct VariantCondition: Sendable, Equatable {
    public var pointer: JSONPointer
    public var test: Test

    public enum Test: Sendable, Equatable {
        /// The value, stringified, is this; null or missing never is.
        case equals(String)
        /// The value, stringified, is one of these; null or missing never is.
        case oneOf([String])
        /// true: the field is there and not null; false: it is null or missing.
        case present(Bool)
    }

    public init(_ pointer: JSONPointer, _ test: Test) {
        self.pointer = pointer
        self.test = test
    }

    /// Whether the condition holds for an event whose data is `data`.
    /// - Throws: ``MappingFailure/wrongType(field:expected:found:)`` when `equals` or `one_of`
    ///   meets an array or an object.
    public func holds(in data: JSONValue) throws(MappingFailure) -> Bool {
        let value = pointer.resolve(in: data) ?? .null
        if case .present(let wanted) = test { return (value != .null) == wanted }
        if value == .null { return false }
        guard let text = Stringify.scalar(value) else {
            throw .wrongType(field: pointer.description, expected: "a string, number or boolean to compare", found: value.typeName)
        }
        switch test {
        case .equals(let literal): return text == literal
        case .oneOf(let literals): return literals.contains(text)
        case .present: return false  // handled above
        }
    }

    /// `/status = "shipped"`, `/status in ["a", "b"]`, `/photo present`: for logs and `render`.
    public var description: String {
        switch test {
        case .equals(let v): "\(pointer) = \"\(v)\""
        case .oneOf(let vs): "\(pointer) in [" + vs.map { "\"\($0)\"" }.joined(separator: ", ") + "]"
        case .present(true): "\(pointer) present"
        case .present(false): "\(pointer) absent"
        }
    }
}

/// What makes a mapping one of an event type's variants: its name, its place, its conditions.
public struct Variant: Sendable, Equatable {
    /// The `name:` given, if any.
    public var name: String?
    /// Its place among the event type's variants, from 0.
    public var index: Int
    /// All must hold; empty for the default.
    public var conditions: [VariantCondition]
    /// `default: true`: takes every event no earlier variant took.
    public var isDefault: Bool

    public init(name: String?, index: Int, conditions: [VariantCondition], isDefault: Bool = false) {
        self.name = name
        self.index = index
        self.conditions = conditions
        self.isDefault = isDefault
    }

    /// Its name, or `#2` for the second variant without one.
    public var label: String { name ?? "#\(index + 1)" }

    /// Why an event takes it: `/status = "shipped"`, or `default`.
    public var why: String {
        isDefault ? "default" : conditions.map(\.description).joined(separator: " and ")
    }

    /// `variant: shipped (/status = "shipped")`, or `variant: default`: what `render` and
    /// `preview` print.
    public var summary: String {
        isDefault && name == nil ? "variant: default" : "variant: \(label) (\(why))"
    }
}

/// What becomes of an event no variant takes (`unmatched:`).
public enum UnmatchedAction: String, Sendable, CaseIterable {
    /// Done without a send, and counted.
    case skip
    /// Done once a dead-letter record (`no_variant`) is written, and counted.
    case deadLetter = "dead-letter"
}

/// An event type's variants, in file order: the first whose conditions hold is the push.
public struct VariantSet: Sendable {
    public var eventType: String
    /// Each a whole mapping, with its ``EventMapping/variant`` set.
    public var variants: [EventMapping]
    /// nil when the last variant is the default.
    public var unmatched: UnmatchedAction?

    /// The first variant whose conditions hold for `event`, nil when none does.
    /// - Throws: ``MappingFailure/wrongType(field:expected:found:)`` for a compared field that
    ///   is an array or an object.
    func choose(_ event: DecodedEvent) throws(MappingFailure) -> EventMapping? {
        for mapping in variants {
            guard let variant = mapping.variant else { continue }
            var all = true
            for condition in variant.conditions where all {
                all = try condition.holds(in: event.data)
            }
            if all { return mapping }
        }
        return nil
    }

    /// `order.status_changed: variants shipped (/status = "shipped"), default; else skipped`:
    /// what `validate` lists.
    public var summary: String {
        let list = variants.compactMap(\.variant).map { $0.isDefault && $0.name == nil ? "default" : "\($0.label) (\($0.why))" }
        var line = "\(eventType): variants " + list.joined(separator: ", ")
        switch unmatched {
        case .skip?: line += "; else skipped"
        case .deadLetter?: line += "; else dead-lettered (no_variant)"
        case nil: break
        }
        return line
    }

    /// With each variant's byte template compiled.
    var compiled: VariantSet {
        var set = self
        for i in set.variants.indices { set.variants[i].template = set.variants[i].compileTemplate() }
        return set
    }

    /// Whether some variant targets a user (the worker then needs the device registry).
    var targetsUsers: Bool {
        variants.contains { if case .user = $0.target { true } else { false } }
    }
}

/// An event no variant of its type takes: not sent, skipped or dead-lettered as the mapping's
/// `unmatched` says (the pipeline decides, like for ``TooOld``).
public struct NoVariant: Sendable, Equatable {
    public var eventType: String
    public var eventID: String
    public var action: UnmatchedAction

    public init(eventType: String, eventID: String, action: UnmatchedAction) {
        self.eventType = eventType
        self.eventID = eventID
        self.action = action
    }

    /// `no variant matched: skipped`: what `render` and `preview` print.
    public var summary: String {
        "no variant matched: " + (action == .skip ? "skipped" : "dead-lettered (no_variant)")
    }
}
