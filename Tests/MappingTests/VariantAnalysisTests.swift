import Testing

@testable import Mapping

/// ``VariantAnalysis``: what the conditions alone say about an event type's variants, and the
/// load errors and warnings it gives (docs/mapping.md, *Variants*).
@Suite("Variant analysis: never chosen, shadowed, after the default, overlapping")
struct VariantAnalysisTests {
    static let status = JSONPointer("/status")!
    static let photo = JSONPointer("/photo")!
    static let express = JSONPointer("/express")!

    static func v(_ label: String, _ conditions: [VariantCondition], isDefault: Bool = false) -> VariantAnalysis.Input {
        VariantAnalysis.Input(label: label, line: 0, isDefault: isDefault, conditions: conditions)
    }
    static func eq(_ p: JSONPointer, _ v: String) -> VariantCondition { VariantCondition(p, .equals(v)) }
    static func oneOf(_ p: JSONPointer, _ vs: [String]) -> VariantCondition { VariantCondition(p, .oneOf(vs)) }
    static func present(_ p: JSONPointer, _ b: Bool) -> VariantCondition { VariantCondition(p, .present(b)) }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var variants: [VariantAnalysis.Input]
        /// (severity, variant index, start of the message)
        var findings: [(MappingLoadError.Severity, Int, String)]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "specific then general: silent",
            variants: [
                v("delivered_with_photo", [eq(status, "delivered"), present(photo, true)]), v("delivered", [eq(status, "delivered")]),
                v("shipped", [eq(status, "shipped")]), v("other", [], isDefault: true),
            ], findings: []),
        Case(
            name: "exclusive values: silent",
            variants: [v("a", [eq(status, "a")]), v("b", [oneOf(status, ["b", "c"])]), v("none", [present(status, false)])],
            findings: []),
        Case(
            name: "equals a and equals b: never chosen", variants: [v("x", [eq(status, "a"), eq(status, "b")])],
            findings: [(.error, 0, "variant \"x\" can never be chosen: its conditions contradict")]),
        Case(
            name: "present: false and equals: never chosen", variants: [v("x", [present(photo, false), eq(photo, "p")])],
            findings: [(.error, 0, "variant \"x\" can never be chosen: its conditions contradict")]),
        Case(
            name: "disjoint one_ofs: never chosen", variants: [v("x", [oneOf(status, ["a", "b"]), oneOf(status, ["c"])])],
            findings: [(.error, 0, "variant \"x\" can never be chosen: its conditions contradict")]),
        Case(
            name: "equals and an including one_of on one field: fine", variants: [v("x", [oneOf(status, ["a", "b"]), eq(status, "a")])], findings: []),
        Case(
            name: "general then specific: shadowed",
            variants: [v("delivered", [eq(status, "delivered")]), v("with_photo", [eq(status, "delivered"), present(photo, true)])],
            findings: [(.error, 1, "variant \"with_photo\" can never be chosen: every event it takes, variant \"delivered\" (line 0) takes first")]),
        Case(
            name: "equals inside an earlier one_of: shadowed", variants: [v("moving", [oneOf(status, ["a", "b"])]), v("a", [eq(status, "a")])],
            findings: [(.error, 1, "variant \"a\" can never be chosen: every event it takes, variant \"moving\"")]),
        Case(
            name: "equals after present: true: shadowed", variants: [v("any", [present(status, true)]), v("a", [eq(status, "a")])],
            findings: [(.error, 1, "variant \"a\" can never be chosen")]),
        Case(
            name: "one_of inside an earlier one_of: shadowed",
            variants: [v("ab", [oneOf(status, ["a", "b", "c"])]), v("a", [oneOf(status, ["b", "a"])])],
            findings: [(.error, 1, "variant \"a\" can never be chosen")]),
        Case(
            name: "the same condition twice: shadowed", variants: [v("#1", [eq(status, "a")]), v("#2", [eq(status, "a")])],
            findings: [(.error, 1, "variant \"#2\" can never be chosen: every event it takes, variant \"#1\"")]),
        Case(
            name: "after the default", variants: [v("a", [eq(status, "a")]), v("other", [], isDefault: true), v("b", [eq(status, "b")])],
            findings: [(.error, 2, "variant \"b\" comes after the default variant \"other\"")]),
        Case(
            name: "two defaults", variants: [v("d1", [], isDefault: true), v("d2", [], isDefault: true)],
            findings: [(.error, 1, "variant \"d2\" comes after the default variant \"d1\"")]),
        Case(
            name: "overlap without implication: a warning naming both",
            variants: [v("shipped", [eq(status, "shipped")]), v("express", [eq(express, "true")])],
            findings: [(.warning, 1, "variants \"shipped\" (line 0) and \"express\" can both match an event; \"shipped\" is chosen")]),
        Case(
            name: "overlapping one_ofs: a warning", variants: [v("ab", [oneOf(status, ["a", "b"])]), v("bc", [oneOf(status, ["b", "c"])])],
            findings: [(.warning, 1, "variants \"ab\" (line 0) and \"bc\" can both match")]),
        Case(
            name: "a contradictory variant overlaps nothing",
            variants: [v("never", [eq(status, "a"), eq(status, "b")]), v("a", [eq(status, "a")])],
            findings: [(.error, 0, "variant \"never\" can never be chosen")]),
        Case(
            name: "duplicate values in one_of: a warning", variants: [v("x", [oneOf(status, ["a", "b", "a"])])],
            findings: [(.warning, 0, "one_of on /status lists \"a\" more than once")]),
    ]

    @Test("the table", arguments: cases)
    func table(_ c: Case) {
        let findings = VariantAnalysis.analyze(c.variants)
        #expect(findings.count == c.findings.count, "\(findings)")
        for (found, (severity, index, message)) in zip(findings, c.findings) {
            #expect(found.severity == severity && found.variant == index && found.message.hasPrefix(message), "\(found)")
        }
    }

    static let base = """
        version: 1
        events:
          order.status_changed:
            target: {token: {field: /token}}
            body: {key: order_updated}

        """

    @Test("the loaded file: errors at the variant's line, naming the earlier variant's")
    func loaded() {
        let e = loadErrors(
            Self.base + """
                    variants:
                      - name: delivered
                        when: {field: /status, equals: delivered}
                      - name: with_photo
                        when: [{field: /status, equals: delivered}, {field: /photo, present: true}]
                    unmatched: skip
                """)
        #expect(
            e.map(\.description) == [
                "test.yaml:9:9: error: variant \"with_photo\" can never be chosen: every event it takes, variant \"delivered\" (line 7) takes first (event \"order.status_changed\")\n    hint: put the more specific variant first, or remove one"
            ])
    }

    @Test("an overlap loads with a warning")
    func overlapWarning() throws {
        let set = try load(
            Self.base + """
                    variants:
                      - name: shipped
                        when: {field: /status, equals: shipped}
                      - name: express
                        when: {field: /express, equals: true}
                    unmatched: skip
                """)
        #expect(
            set.warnings.map(\.description) == [
                "test.yaml:9:9: warning: variants \"shipped\" (line 7) and \"express\" can both match an event; \"shipped\" is chosen (event \"order.status_changed\")\n    hint: make the conditions exclusive, or put the more specific variant first"
            ])
    }

    @Test("without a default, unmatched is required")
    func unmatchedRequired() {
        let e = loadErrors(
            Self.base + """
                    variants:
                      - when: {field: /status, equals: shipped}
                """)
        #expect(e.count == 1)
        #expect(e.first?.line == 6 && e.first?.message == "event \"order.status_changed\" has variants but no `unmatched`, and no default variant")
        #expect(e.first?.hint?.contains("unmatched: skip") == true)
    }

    @Test("unmatched beside a default is an error")
    func unmatchedBesideDefault() {
        let e = loadErrors(
            Self.base + """
                    variants:
                      - when: {field: /status, equals: shipped}
                      - default: true
                    unmatched: dead-letter
                """)
        #expect(e.map { "\($0.line): \($0.message)" } == ["9: `unmatched` beside a default variant never applies (event \"order.status_changed\")"])
    }

    @Test("occurred_at and event_time cannot be set in a variant", arguments: ["occurred_at", "event_time"])
    func eventLevelKeys(key: String) {
        let e = loadErrors(
            Self.base + """
                    max_age: 10m
                    variants:
                      - when: {field: /status, equals: shipped}
                        \(key): {field: /at}
                    unmatched: skip
                """)
        #expect(
            e.map { "\($0.line):\($0.column): \($0.message)" } == [
                "9:9: `\(key)` cannot be set in a variant (variant \"#1\")"
            ])
    }

    @Test(
        "malformed conditions",
        arguments: [
            ("{field: /s}", "a `when` condition has exactly one of `equals`, `one_of` or `present`"),
            ("{field: /s, equals: a, present: true}", "a `when` condition has exactly one of `equals`, `one_of` or `present`"),
            ("{equals: a}", "a `when` condition needs `field: /pointer`"),
            ("{field: s, equals: a}", "\"s\" is not a JSON Pointer"),
            ("{field: /s, equals: [a]}", "a value to compare with must be a string, number or boolean"),
            ("{field: /s, equals: null}", "null never equals a field's value"),
            ("{field: /s, one_of: []}", "`one_of` must be a non-empty list of values"),
            ("{field: /s, present: yes}", "`present` must be true or false"),
            ("[]", "`when` is an empty list"),
        ])
    func malformed(when: String, message: String) {
        let e = loadErrors(
            Self.base + """
                    variants:
                      - when: \(when)
                    unmatched: skip
                """)
        #expect(e.first?.message.hasPrefix(message) == true, "\(e)")
    }
}
