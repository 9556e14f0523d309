import Mapping
import Testing

/// What FCM would refuse, caught where the mapping core can catch it: at load with file:line
/// for what a mapping file says literally, at render (a dead-letter reason) for what an event
/// says. Each rule names its source.
@Suite("FCM's rules, at load and at render")
struct FCMRulesTests {
    static func mapping(target: String, extra: String = "") -> String {
        """
        version: 1
        event: {id: /id}
        events:
          e:
            target: \(target)
            body: {key: k}
        \(extra.split(separator: "\n").map { "    " + $0 }.joined(separator: "\n"))
        """
    }

    // MARK: fid (v1 Message.fid; Message.token is "Deprecated: Use fid instead", discovery document rev. 20261023)

    @Test("fid and fids targets send `fid`; the message's target says which kind of identifier it is")
    func fid() throws {
        let one = try load(Self.mapping(target: "{fid: {field: /fid}}") + "\n    platforms: [android]")
        let rendered = try one.render(EventRecord(value: Array(#"{"type":"e","fid":"cYz5ANl0QjePd9BlxiXjt8"}"#.utf8)), now: renderNow).get()
        #expect(rendered.messages.map(\.target) == [MessageTarget(.fid, "cYz5ANl0QjePd9BlxiXjt8")])
        #expect(
            String(decoding: rendered.messages[0].encoded, as: UTF8.self)
                == #"{"android":{"notification":{"body_loc_key":"k"}},"fid":"cYz5ANl0QjePd9BlxiXjt8"}"#)

        let many = try load(Self.mapping(target: "{fids: {field: /fids}}") + "\n    platforms: [android]")
        let out = try bodies(many, #"{"type":"e","fids":["f1","f2"]}"#)
        #expect(out == ["f1", "f2"].map { #"{"message":{"android":{"notification":{"body_loc_key":"k"}},"fid":"\#($0)"}}"# })
        let literal = try load(Self.mapping(target: "{fids: [f1, f2]}") + "\n    platforms: [android]")
        #expect(try bodies(literal, #"{"type":"e"}"#).count == 2)
    }

    @Test(
        "a device identifier from the event must be a non-empty string: never a number or boolean turned into one",
        arguments: [
            (#"{"type":"e","t":""}"#, "no_targets"), (#"{"type":"e","t":true}"#, "wrong_type"), (#"{"type":"e","t":12345}"#, "wrong_type"),
            (#"{"type":"e","t":null}"#, "missing_field"), (#"{"type":"e","t":["a"]}"#, "wrong_type"),
        ])
    func deviceIdentifierTypes(event: String, code: String) throws {
        for kind in ["token", "fid"] {
            let set = try load(Self.mapping(target: "{\(kind): {field: /t}}"))
            #expect(failure(set, event)?.code == code, "\(kind): \(event)")
        }
    }

    // MARK: Conditions (FCM topic messaging guide: "up to five topics", operators &&, ||, !, parentheses)

    @Test(
        "conditions FCM accepts",
        arguments: [
            "'a' in topics", "'TopicA' in topics && ('TopicB' in topics || 'TopicC' in topics)", "!('a' in topics)",
            "!'a' in topics || 'b' in topics", "('a' in topics)&&('b' in topics)", "'a-b_c.d~e%f' in topics && !('x' in topics || 'y' in topics)",
            "'a' in topics && 'b' in topics && 'c' in topics && 'd' in topics && 'e' in topics",
        ])
    func validConditions(condition: String) throws {
        #expect(try TopicCondition.check(condition).count >= 1)
        let set = try load(Self.mapping(target: "{condition: {field: /c}}"))
        #expect(throws: Never.self) { try bodies(set, #"{"type":"e","c":"\#(condition.replacingOccurrences(of: "'", with: "\\u0027"))"}"#) }
    }

    @Test(
        "conditions FCM refuses, with why",
        arguments: [
            ("", "empty"), ("   ", "empty"), ("'a' in topics &&", "expected a topic"), ("'a' in topic", "expected `in topics`"),
            ("a in topics", "single quotes"), ("('a' in topics", "expected )"), ("'a' in topics)", "expected && or ||"),
            ("'a b' in topics", "not a valid topic name"), ("'' in topics", "empty"),
            ("'a' in topics || 'b' in topics & 'c' in topics", "expected && or ||"),
            ("'a' in topics && 'b' in topics && 'c' in topics && 'd' in topics && 'e' in topics && 'f' in topics", "at most 5"),
            ("'a in topics", "not closed"),
        ])
    func invalidConditions(condition: String, why: String) throws {
        #expect(throws: TopicCondition.Invalid.self) { try TopicCondition.check(condition) }
        do { _ = try TopicCondition.check(condition) } catch { #expect(error.description.contains(why), "\(condition): \(error)") }
        // From an event: a dead-letter reason; written in the mapping: a load error with file:line.
        let set = try load(Self.mapping(target: "{condition: {field: /c}}"))
        let event = #"{"type":"e","c":"\#(condition.replacingOccurrences(of: "'", with: "\\u0027"))"}"#
        guard case .invalidValue(let field, let reason)? = failure(set, event) else {
            Issue.record("rendered: \(condition)")
            return
        }
        #expect(field == "/c" && reason.contains(why))
        let errors = loadErrors(Self.mapping(target: "{condition: \"\(condition)\"}"))
        #expect(errors.count == 1 && errors.first?.line == 5 && errors.first?.message.contains(why) == true, "\(errors)")
    }

    // MARK: Sizes (ErrorCode INVALID_ARGUMENT: "4096 bytes ... or 2048 bytes in the case of messages to topics")

    @Test("a message to a condition is held to 2048 bytes, as one to a topic; to a device 4096")
    func conditionSize() throws {
        let filler = String(repeating: "x", count: 2100)
        for (target, limit) in [("{condition: \"'a' in topics\"}", 2048), ("{topic: news}", 2048), ("{token: t}", 4096)] {
            let set = try load(Self.mapping(target: target) + "\n    data: {v: {field: /v}}")
            let outcome = failure(set, #"{"type":"e","v":"\#(filler)"}"#)
            if limit == 2048 {
                guard case .tooLarge(_, let l)? = outcome else {
                    Issue.record("\(target): \(String(describing: outcome))")
                    continue
                }
                #expect(l == 2048)
            } else {
                #expect(outcome == nil, "\(target)")
            }
        }
    }

    // MARK: Mappings that load but could never send: refused with file:line

    @Test(
        "literal targets FCM would refuse",
        arguments: [
            ("{topic: \"news flash\"}", "not a valid topic name"), ("{topic: \"\(String(repeating: "t", count: 901))\"}", "FCM allows 900"),
            ("{topic: \"/topics/\"}", "empty"), ("{token: \"\"}", "the token is empty"), ("{fid: \"\"}", "the fid is empty"),
            ("{tokens: []}", "empty list"), ("{fids: [\"\"]}", "empty or non-string"), ("{condition: \"'a' in topics &&\"}", "expected a topic"),
        ])
    func literalTargets(target: String, why: String) {
        let errors = loadErrors(Self.mapping(target: target))
        #expect(errors.count == 1, "\(errors)")
        #expect(errors.first?.line == 5, "\(errors)")
        #expect(errors.first?.message.contains(why) == true, "\(errors)")
    }

    @Test("a 900-character topic is FCM's longest (`[a-zA-Z0-9-_.~%]{1,900}`)")
    func longestTopic() throws {
        #expect(throws: Never.self) { try load(Self.mapping(target: "{topic: \(String(repeating: "t", count: 900))}")) }
    }

    @Test("a literal collapse key or replace ID that cannot be apns-collapse-id (APNs: at most 64 bytes)")
    func literalCollapseIDs() throws {
        let long = String(repeating: "k", count: 65)
        for extra in ["collapse_key: \(long)", "replace_id: \(long)"] {
            let errors = loadErrors(Self.mapping(target: "{token: t}", extra: extra))
            #expect(errors.count == 1 && errors[0].line == 7 && errors[0].message.contains("64"), "\(errors)")
        }
        // Android only: no APNs header, no APNs limit.
        #expect(throws: Never.self) { try load(Self.mapping(target: "{token: t}", extra: "collapse_key: \(long)\nplatforms: [android]")) }
    }

    @Test(
        "silent: true with options that show something, which would be dropped, is refused",
        arguments: [
            "android: {channel_id: c}", "apns: {sound: default}", "apns: {badge: 1}", "replace_id: {from: event_id}",
        ])
    func silentWithVisibleOptions(option: String) {
        let errors = loadErrors(
            """
            version: 1
            events:
              e:
                target: {token: t}
                silent: true
                \(option)
                data: {k: v}
            """)
        #expect(errors.count == 1 && errors[0].line == 6 && errors[0].message.contains("silent push shows no notification"), "\(errors)")
    }

    // MARK: replace_id and collapse_key (v1 reference: AndroidConfig.collapseKey "A maximum of 4 different collapse keys";
    // AndroidNotification.tag "Identifier used to replace existing notifications"; APNs apns-collapse-id)

    @Test("replace_id sets Android's tag and apns-collapse-id; beside a collapse key, the group keeps apns-collapse-id")
    func replaceID() throws {
        let alone = try load(Self.mapping(target: "{token: t}", extra: "replace_id: {from: event_id}"))
        #expect(
            try bodies(alone, #"{"type":"e","id":"ev-9"}"#) == [
                #"{"message":{"android":{"notification":{"body_loc_key":"k","tag":"ev-9"}},"apns":{"headers":{"apns-collapse-id":"ev-9","apns-push-type":"alert"},"payload":{"aps":{"alert":{"loc-key":"K"}}}},"token":"t"}}"#
            ])
        let both = try load(Self.mapping(target: "{token: t}", extra: "replace_id: {from: event_id}\ncollapse_key: {field: /chat}"))
        #expect(
            try bodies(both, #"{"type":"e","id":"ev-9","chat":"chat-42"}"#) == [
                #"{"message":{"android":{"collapse_key":"chat-42","notification":{"body_loc_key":"k","tag":"ev-9"}},"apns":{"headers":{"apns-collapse-id":"chat-42","apns-push-type":"alert"},"payload":{"aps":{"alert":{"loc-key":"K"}}}},"token":"t"}}"#
            ])
        let errors = loadErrors(Self.mapping(target: "{token: t}", extra: "replace_id: {from: event_id}\nandroid: {tag: x}"))
        #expect(errors.count == 1 && errors[0].message.contains("both set Android's notification tag"), "\(errors)")
    }

    @Test("a collapse key per event loads with a warning at its line; a group key loads without one")
    func perEventCollapseKeyWarns() throws {
        for key in ["{from: event_id}", "{field: /id}"] {
            let set = try load(Self.mapping(target: "{token: t}", extra: "collapse_key: \(key)"))
            #expect(set.warnings.count == 1)
            let w = try #require(set.warnings.first)
            #expect(w.severity == .warning && w.line == 7 && w.message.contains("at most 4 collapse keys"))
            #expect(w.description.hasPrefix("test.yaml:7:19: warning: "), "\(w.description)")
            #expect(w.hint?.contains("replace_id") == true)
        }
        #expect(try load(Self.mapping(target: "{token: t}", extra: "collapse_key: {field: /chat}")).warnings.isEmpty)
    }

    // MARK: Header values (RFC 9113 §8.2.1: no NUL, CR or LF; no leading or trailing whitespace)

    @Test(
        "an event ID that cannot be an HTTP/2 header never reaches apns-collapse-id",
        arguments: ["ev\r\nx-injected: 1", "ev\u{0}1", " ev", "ev\t", "ev\n"])
    func headerValues(id: String) throws {
        let set = try load(Self.mapping(target: "{token: t}", extra: "replace_id: {from: event_id}"))
        let json = JSONWriter.string(.object([("type", .string("e")), ("id", .string(id))]))
        guard case .invalidValue(_, let reason)? = failure(set, json) else {
            Issue.record("rendered \(id.debugDescription)")
            return
        }
        #expect(reason.contains("apns-collapse-id"), "\(reason)")
        // Android only: the tag is a JSON field, not a header.
        let android = try load(Self.mapping(target: "{token: t}", extra: "replace_id: {from: event_id}\nplatforms: [android]"))
        #expect(failure(android, json) == nil)
    }

    // MARK: TTL on iOS (ApnsConfig.headers: "The backend sets a default value for apns-expiration of 30 days")

    @Test("ttl also sets apns-expiration, as an absolute time (now + ttl); ttl 0 stays 0; no ttl leaves FCM's default")
    func ttlOnIOS() throws {
        for (ttl, expiration) in [("1h", "\(renderNow + 3600)"), ("0", "0"), ("4w", "\(renderNow + 2_419_200)")] {
            let set = try load(Self.mapping(target: "{token: t}", extra: "ttl: \(ttl)"))
            let out = try bodies(set, #"{"type":"e"}"#)
            #expect(out.count == 1 && out[0].contains(#""apns-expiration":"\#(expiration)""#), "\(ttl): \(out)")
        }
        let none = try load(Self.mapping(target: "{token: t}"))
        #expect(try bodies(none, #"{"type":"e"}"#).allSatisfy { !$0.contains("apns-expiration") })
        // The template and the tree take the same clock.
        let set = try load(Self.mapping(target: "{token: {field: /t}}", extra: "ttl: 60"))
        let rendered = set.render(EventRecord(value: Array(#"{"type":"e","t":"x"}"#.utf8)), now: 1_000)
        #expect(try String(decoding: rendered.get().messages[0].encoded, as: UTF8.self).contains(#""apns-expiration":"1060""#))
    }
}
