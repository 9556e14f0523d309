import Mapping
import Testing

/// A `when` condition against event values, compared as the stringification rule writes them
/// (docs/mapping.md, *Variants*).
@Suite("Variant conditions: what equals, one_of and present hold for")
struct VariantConditionTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var test: VariantCondition.Test
        var event: String
        /// nil: the event fails with wrong_type.
        var holds: Bool?
        var testDescription: String { "\(test) on \(event)" }
    }

    static let cases: [Case] = [
        // strings
        Case(test: .equals("shipped"), event: #"{"v":"shipped"}"#, holds: true),
        Case(test: .equals("shipped"), event: #"{"v":"Shipped"}"#, holds: false),
        Case(test: .equals(""), event: #"{"v":""}"#, holds: true),
        // numbers: compared stringified
        Case(test: .equals("3"), event: #"{"v":3}"#, holds: true),
        Case(test: .equals("3"), event: #"{"v":"3"}"#, holds: true),
        Case(test: .equals("3"), event: #"{"v":3.0}"#, holds: true),
        Case(test: .equals("3"), event: #"{"v":3.5}"#, holds: false),
        Case(test: .equals("2.5"), event: #"{"v":2.50}"#, holds: true),
        Case(test: .equals("12345678901234567890"), event: #"{"v":12345678901234567890}"#, holds: true),
        // booleans
        Case(test: .equals("true"), event: #"{"v":true}"#, holds: true),
        Case(test: .equals("true"), event: #"{"v":"true"}"#, holds: true),
        Case(test: .equals("true"), event: #"{"v":false}"#, holds: false),
        // null and missing never equal
        Case(test: .equals("null"), event: #"{"v":null}"#, holds: false),
        Case(test: .equals(""), event: #"{}"#, holds: false),
        Case(test: .oneOf(["a", "null"]), event: #"{"v":null}"#, holds: false),
        Case(test: .oneOf(["a", "b"]), event: #"{}"#, holds: false),
        // one_of
        Case(test: .oneOf(["out_for_delivery", "nearby"]), event: #"{"v":"nearby"}"#, holds: true),
        Case(test: .oneOf(["1", "2"]), event: #"{"v":2}"#, holds: true),
        Case(test: .oneOf(["1", "2"]), event: #"{"v":3}"#, holds: false),
        // present
        Case(test: .present(true), event: #"{"v":"x"}"#, holds: true),
        Case(test: .present(true), event: #"{"v":""}"#, holds: true),
        Case(test: .present(true), event: #"{"v":false}"#, holds: true),
        Case(test: .present(true), event: #"{"v":[1]}"#, holds: true),
        Case(test: .present(true), event: #"{"v":null}"#, holds: false),
        Case(test: .present(true), event: #"{}"#, holds: false),
        Case(test: .present(false), event: #"{"v":null}"#, holds: true),
        Case(test: .present(false), event: #"{}"#, holds: true),
        Case(test: .present(false), event: #"{"v":0}"#, holds: false),
        Case(test: .present(false), event: #"{"v":{}}"#, holds: false),
        // arrays and objects cannot be compared
        Case(test: .equals("a"), event: #"{"v":["a"]}"#, holds: nil),
        Case(test: .oneOf(["a"]), event: #"{"v":{"a":1}}"#, holds: nil),
    ]

    @Test("the table", arguments: cases)
    func table(_ c: Case) throws {
        let condition = VariantCondition(JSONPointer("/v")!, c.test)
        let data = try JSONParser.parse(Array(c.event.utf8))
        let result = Result { () throws(MappingFailure) in try condition.holds(in: data) }
        switch (result, c.holds) {
        case (.success(let holds), let expected?): #expect(holds == expected)
        case (.failure(let f), nil): #expect(f.code == "wrong_type" && f.reason.hasPrefix("field /v is "))
        default: Issue.record("\(result) for \(c.testDescription)")
        }
    }

    @Test("an array under equals fails the event with wrong_type when rendering")
    func wrongTypeEvent() throws {
        let set = try load(
            """
            version: 1
            events:
              e:
                target: {token: t}
                variants:
                  - when: {field: /status, equals: a}
                    body: {key: k}
                unmatched: skip
            """)
        #expect(
            failure(set, #"{"type":"e","status":["a"]}"#)
                == .wrongType(field: "/status", expected: "a string, number or boolean to compare", found: "array"))
    }

    @Test(
        "an unquoted number or boolean in the mapping is compared in the stringified form; a quoted one as written",
        arguments: [
            ("2.50", #"{"v":2.5}"#, true), ("2.50", #"{"v":"2.5"}"#, true), ("\"2.50\"", #"{"v":2.5}"#, false),
            ("\"2.50\"", #"{"v":"2.50"}"#, true), ("1e3", #"{"v":1000}"#, true), ("007", #"{"v":"007"}"#, true),
            ("True", #"{"v":true}"#, true), ("\"True\"", #"{"v":true}"#, false), ("3", #"{"v":3.0}"#, true),
        ])
    func writtenValues(literal: String, event: String, holds: Bool) throws {
        let set = try load(
            """
            version: 1
            events:
              e:
                target: {token: t}
                body: {key: k}
                variants:
                  - when: {field: /v, equals: \(literal)}
                unmatched: skip
            """)
        let json = #"{"type":"e","# + event.dropFirst()  // the event's members after its type
        #expect((failure(set, json) == nil) == holds, "\(literal) against \(event)")
    }
}
