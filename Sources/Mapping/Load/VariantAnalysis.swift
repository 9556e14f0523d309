/// Load-time checks of an event type's variants, from their conditions alone. Pure.
///
/// Per field, a variant's conditions denote a set of values: `equals v` is {v}, `one_of S` is S,
/// `present: true` is every non-null value, `present: false` is null or missing; several on one
/// field intersect. From those sets:
/// 1. a variant whose set is empty for some field can never be chosen: an error;
/// 2. a variant every event of which an earlier variant already takes (its set is, field by
///    field, inside the earlier one's) can never be chosen: an error naming the earlier one;
/// 3. a variant after the `default` can never be chosen: an error;
/// 4. two variants that can both hold without either implying the other: a warning saying
///    which one is chosen. A specific variant before a general one (the general implied by
///    the specific) is the intended pattern, and silent. Duplicate values in a `one_of` warn.
enum VariantAnalysis {
    /// A variant as the analysis sees it.
    struct Input: Equatable {
        var label: String
        var line: Int
        var isDefault: Bool
        var conditions: [VariantCondition]

        init(label: String, line: Int, isDefault: Bool = false, conditions: [VariantCondition]) {
            self.label = label
            self.line = line
            self.isDefault = isDefault
            self.conditions = conditions
        }
    }

    struct Finding: Equatable {
        var severity: MappingLoadError.Severity
        /// The variant it is about (its index in the input).
        var variant: Int
        var message: String
        var hint: String?
    }

    /// The values a field may hold for a variant to be chosen.
    enum Domain: Equatable {
        /// Null or missing.
        case absent
        /// Any value but null.
        case present
        /// One of these (stringified).
        case values(Set<String>)

        /// Every value of `self` is one of `other`'s.
        func isInside(_ other: Domain) -> Bool {
            switch (self, other) {
            case (.absent, .absent), (.present, .present), (.values, .present): true
            case (.values(let a), .values(let b)): a.isSubset(of: b)
            default: false
            }
        }

        /// The values both allow; nil when none.
        func intersection(_ other: Domain) -> Domain? {
            switch (self, other) {
            case (.absent, .absent): .absent
            case (.present, .present): .present
            case (.values(let a), .present), (.present, .values(let a)): .values(a)
            case (.values(let a), .values(let b)): a.isDisjoint(with: b) ? nil : .values(a.intersection(b))
            default: nil
            }
        }
    }

    /// Each field's domain, or nil when the conditions contradict each other.
    static func domains(_ conditions: [VariantCondition]) -> [JSONPointer: Domain]? {
        var domains: [JSONPointer: Domain] = [:]
        for c in conditions {
            let domain: Domain =
                switch c.test {
                case .equals(let v): .values([v])
                case .oneOf(let vs): .values(Set(vs))
                case .present(let p): p ? .present : .absent
                }
            if let existing = domains[c.pointer] {
                guard let both = existing.intersection(domain) else { return nil }
                domains[c.pointer] = both
            } else {
                domains[c.pointer] = domain
            }
        }
        return domains
    }

    /// Every event `a` takes, `b` takes too: each of `b`'s fields constrained by `a` at least as much.
    static func implies(_ a: [JSONPointer: Domain], _ b: [JSONPointer: Domain]) -> Bool {
        b.allSatisfy { pointer, domain in a[pointer].map { $0.isInside(domain) } ?? false }
    }

    /// Some event can be taken by both.
    static func overlap(_ a: [JSONPointer: Domain], _ b: [JSONPointer: Domain]) -> Bool {
        a.allSatisfy { pointer, domain in b[pointer].map { domain.intersection($0) != nil } ?? true }
    }

    static func analyze(_ variants: [Input]) -> [Finding] {
        var findings: [Finding] = []
        var earlier: [(index: Int, domains: [JSONPointer: Domain])] = []
        var defaultIndex: Int?
        for (i, v) in variants.enumerated() {
            if let d = defaultIndex {
                findings.append(
                    Finding(
                        severity: .error, variant: i,
                        message:
                            "variant \(quoted(v.label)) comes after the default variant \(quoted(variants[d].label)) (line \(variants[d].line)), which takes every event",
                        hint: "the default variant must be the last one"))
                continue
            }
            for c in v.conditions {
                guard case .oneOf(let values) = c.test, Set(values).count != values.count else { continue }
                let duplicates = Set(values.filter { value in values.filter { $0 == value }.count > 1 }).sorted()
                findings.append(
                    Finding(
                        severity: .warning, variant: i,
                        message: "one_of on \(c.pointer) lists " + duplicates.map { "\"\($0)\"" }.joined(separator: ", ") + " more than once",
                        hint: "list each value once"))
            }
            if v.isDefault {
                defaultIndex = i
                continue
            }
            guard let domains = domains(v.conditions) else {
                findings.append(
                    Finding(
                        severity: .error, variant: i, message: "variant \(quoted(v.label)) can never be chosen: its conditions contradict each other",
                        hint: "a field cannot equal two values at once, nor be absent and equal a value"))
                continue
            }
            if let shadow = earlier.first(where: { implies(domains, $0.domains) }) {
                let e = variants[shadow.index]
                findings.append(
                    Finding(
                        severity: .error, variant: i,
                        message:
                            "variant \(quoted(v.label)) can never be chosen: every event it takes, variant \(quoted(e.label)) (line \(e.line)) takes first",
                        hint: "put the more specific variant first, or remove one"))
                continue
            }
            for e in earlier where overlap(domains, e.domains) && !implies(e.domains, domains) {
                let first = variants[e.index]
                findings.append(
                    Finding(
                        severity: .warning, variant: i,
                        message:
                            "variants \(quoted(first.label)) (line \(first.line)) and \(quoted(v.label)) can both match an event; \(quoted(first.label)) is chosen",
                        hint: "make the conditions exclusive, or put the more specific variant first"))
            }
            earlier.append((i, domains))
        }
        return findings
    }

    private static func quoted(_ label: String) -> String { "\"\(label)\"" }
}
