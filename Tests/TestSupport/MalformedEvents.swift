/// Generated malformed events for fuzzing the decoder and the mapping core, and for feeding a
/// running pipeline. Seeded: the same seed gives the same inputs, so a failure can be replayed.
///
/// Every input is built around a `user.welcome` event that fits both the example mappings
/// (target `/user/fcm_token`, body arg `/user/first_name`) and the end-to-end tests' mapping
/// (`/token`, `/name`), so it reaches as deep into the mapping core as its damage allows.
public struct MalformedEvent: Sendable {
    public enum Kind: String, Sendable, CaseIterable {
        /// A valid event cut short.
        case truncated
        /// A valid event with bytes flipped, inserted or deleted.
        case mutated
        /// Arrays or objects nested far beyond the parser's limit.
        case deepNesting
        /// A string argument too large for any FCM message.
        case hugeString
        /// The target token or an argument of the wrong JSON type.
        case wrongType
        /// Invalid UTF-8 inside a string.
        case invalidUTF8
        /// CloudEvents attributes without data (binary-mode headers, or structured JSON).
        case cloudEventsWithoutData
        /// Random bytes.
        case randomBytes
        /// Valid JSON that is not an event object.
        case notAnObject
    }

    public var kind: Kind
    public var value: [UInt8]
    public var headers: [(name: String, value: [UInt8]?)]
    /// The failure codes this input must end with; nil when rendering may also succeed (a
    /// mutation can leave the event valid, and a number stringifies).
    public var expectedFailures: Set<String>?

    /// The `index`-th input: kinds take turns, so any count covers them all evenly.
    public static func generate(_ index: Int, using rng: inout SplitMix64) -> MalformedEvent {
        let kinds = Kind.allCases
        return generate(kinds[index % kinds.count], using: &rng)
    }

    public static func generate(_ kind: Kind, using rng: inout SplitMix64) -> MalformedEvent {
        let token = "tok-\(rng.next() % 1_000_000)"
        func event(firstName: String, token: String) -> [UInt8] {
            Array(
                #"{"type":"user.welcome","id":"x","name":\#(firstName),"token":\#(token),"user":{"first_name":\#(firstName),"fcm_token":\#(token)}}"#
                    .utf8)
        }
        let valid = event(firstName: "\"Zoë\"", token: "\"\(token)\"")
        switch kind {
        case .truncated:
            let cut = Int.random(in: 0..<valid.count, using: &rng)
            return MalformedEvent(kind: kind, value: Array(valid[..<cut]), headers: [], expectedFailures: ["invalid_json"])

        case .mutated:
            var bytes = valid
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                let at = Int.random(in: 0..<bytes.count, using: &rng)
                switch rng.next() % 3 {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &rng)
                case 1: bytes.insert(UInt8.random(in: 0...255, using: &rng), at: at)
                default: if bytes.count > 1 { bytes.remove(at: at) }
                }
            }
            return MalformedEvent(kind: kind, value: bytes, headers: [], expectedFailures: nil)

        case .deepNesting:
            let depth = Int.random(in: 129...100_000, using: &rng)
            let (open, close): (String, String) = rng.next() % 2 == 0 ? ("[", "]") : (#"{"a":"#, "}")
            let nested = String(repeating: open, count: depth) + "1" + String(repeating: close, count: depth)
            return MalformedEvent(kind: kind, value: event(firstName: nested, token: "\"t\""), headers: [], expectedFailures: ["invalid_json"])

        case .hugeString:
            let size = Int.random(in: 5_000...300_000, using: &rng)
            let name = "\"" + String(repeating: "é", count: size / 2) + "\""
            return MalformedEvent(kind: kind, value: event(firstName: name, token: "\"t\""), headers: [], expectedFailures: ["too_large"])

        case .wrongType:
            // docs/mapping.md: an argument's scalars become strings, lists and objects fail, null
            // without a default is missing, a number beyond a double is not accepted as JSON; a
            // device token must be a non-empty JSON string ("Targets"), so a number or a boolean
            // there fails instead of being sent as "123".
            let wrong: [(String, argument: Set<String>?, token: Set<String>)] = [
                ("123", nil, ["wrong_type"]), ("true", nil, ["wrong_type"]), ("-0", nil, ["wrong_type"]), ("\"\"", nil, ["no_targets"]),
                ("[\"a\",\"b\"]", ["wrong_type"], ["wrong_type"]), ("{\"t\":1}", ["wrong_type"], ["wrong_type"]),
                ("null", ["missing_field"], ["missing_field"]), ("1e400", ["invalid_json"], ["invalid_json"]),
            ]
            let (value, asArgument, asToken) = wrong[Int.random(in: 0..<wrong.count, using: &rng)]
            if rng.next() % 2 == 0 {
                return MalformedEvent(kind: kind, value: event(firstName: "\"Zoë\"", token: value), headers: [], expectedFailures: asToken)
            }
            return MalformedEvent(kind: kind, value: event(firstName: value, token: "\"t\""), headers: [], expectedFailures: asArgument)

        case .invalidUTF8:
            let bad: [[UInt8]] = [[0xC3, 0x28], [0xFF], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80]]
            var bytes = valid
            let inside = bytes.firstIndex(of: UInt8(ascii: "Z"))!  // within "Zoë"
            bytes.insert(contentsOf: bad[Int.random(in: 0..<bad.count, using: &rng)], at: inside)
            return MalformedEvent(kind: kind, value: bytes, headers: [], expectedFailures: ["invalid_json"])

        case .cloudEventsWithoutData:
            if rng.next() % 2 == 0 {
                let headers: [(name: String, value: [UInt8]?)] = [
                    ("ce_specversion", Array("1.0".utf8)), ("ce_type", Array("user.welcome".utf8)),
                    ("ce_id", Array("evt-\(rng.next() % 1000)".utf8)), ("ce_source", Array("/users".utf8)),
                ]
                return MalformedEvent(kind: kind, value: [], headers: headers, expectedFailures: ["missing_field"])
            }
            let structured = Array(#"{"specversion":"1.0","type":"user.welcome","id":"e1","source":"/users"}"#.utf8)
            return MalformedEvent(
                kind: kind, value: structured, headers: [("content-type", Array("application/cloudevents+json".utf8))],
                expectedFailures: ["missing_field"])

        case .randomBytes:
            let count = Int.random(in: 0...512, using: &rng)
            return MalformedEvent(
                kind: kind, value: (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }, headers: [], expectedFailures: nil)

        case .notAnObject:
            let values = ["[]", "[1,2,3]", "\"user.welcome\"", "42", "null", "true", "", "   ", "{}", #"{"type":7}"#, #"{"type":null}"#]
            let value = values[Int.random(in: 0..<values.count, using: &rng)]
            return MalformedEvent(
                kind: kind, value: Array(value.utf8), headers: [],
                expectedFailures: ["invalid_json", "missing_event_type", "wrong_type"])
        }
    }
}
