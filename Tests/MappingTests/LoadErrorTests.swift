import Mapping
import Testing

@Suite("Load-time errors: file:line:column and what to do")
struct LoadErrorTests {
    @Test("unknown field, with the allowed ones")
    func unknownField() {
        let e = loadErrors(
            """
            version: 1
            events:
              e:
                target: {token: t}
                body: {key: k}
                colour: red
            """)
        #expect(
            e.map(\.description) == [
                "test.yaml:6:5: error: unknown field `colour` in event \"e\"\n    hint: allowed: target, title, subtitle, body, platforms, ttl, priority, collapse_key, replace_id, silent, android, apns, data, analytics_label, max_age, occurred_at, event_time, too_old, project, image, interruption, relevance, badge, web, fcm, activity, category, critical, quiet_hours, user, cap, dedup, send_at, digest, many"
            ])
    }

    @Test("duplicate event type across files names the first definition")
    func duplicateAcrossFiles() {
        let a = "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n"
        let e = loadErrors([("a.yaml", a), ("b.yaml", a)])
        #expect(e.count == 1)
        #expect(e.first?.file == "b.yaml" && e.first?.line == 3 && e.first?.column == 3)
        #expect(e.first?.message == "duplicate event type \"e\"")
        #expect(e.first?.hint == "first defined at a.yaml:3; each event type has exactly one mapping")
    }

    @Test(
        "reserved data keys",
        arguments: ["from", "message_type", "Message_Type", "google.c.a", "GOOGLE.x", "gcm.n.title", "GCM.notification.x", "gcm.x"])
    func reservedDataKey(key: String) {
        let e = loadErrors(
            """
            version: 1
            events:
              e:
                target: {token: t}
                body: {key: k}
                data:
                  ok: yes
                  \(key): x
            """)
        #expect(e.count == 1)
        #expect(e.first?.line == 8 && e.first?.column == 7)
        #expect(e.first?.message == "data key \"\(key)\" is reserved by FCM")
    }

    @Test(
        "data keys that only start with the letters are the app's own",
        arguments: ["google_place_id", "gcmVersion", "googlex", "gcm", "notification"])
    func ownDataKey(key: String) throws {
        let set = try load("version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    data:\n      \(key): x\n")
        #expect(set.warnings.isEmpty)
        #expect(try bodies(set, #"{"type":"e","id":"1"}"#).first?.contains(#""\#(key)":"x""#) == true)
    }

    @Test("collapse_key as a data key loads with a warning: Android's SDK drops it from getData()")
    func collapseKeyDataKey() throws {
        let set = try load("version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    data:\n      collapse_key: x\n")
        let warning = try #require(set.warnings.first)
        #expect(set.warnings.count == 1 && warning.line == 7 && warning.column == 7)
        #expect(warning.message.contains("never reaches an Android app"))
        #expect(try bodies(set, #"{"type":"e","id":"1"}"#).first?.contains(#""collapse_key":"x""#) == true, "still sent")
    }

    @Test("ttl over 4 weeks, and ttl that is not a duration")
    func ttl() throws {
        let over = loadErrors("version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    ttl: 5w\n")
        #expect(over.first?.description == "test.yaml:6:10: error: ttl 5w is over FCM's maximum of 4 weeks (2419200s)\n    hint: use at most 4w")
        let bad = loadErrors("version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    ttl: soon\n")
        #expect(bad.first?.message == "ttl \"soon\" is not a duration")
        #expect(
            try load("version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    ttl: 4w\n").mappings["e"]?.ttlSeconds == 2_419_200)
    }

    @Test("invalid JSON Pointer")
    func invalidPointer() {
        let e = loadErrors("version: 1\nevents:\n  e:\n    target: {token: {field: user/token}}\n    body: {key: k}\n")
        #expect(e.first?.message == "\"user/token\" is not a JSON Pointer")
        #expect(e.first?.hint?.contains("RFC 6901") == true)
        #expect(e.first?.line == 4)
        let tilde = loadErrors("version: 1\nevents:\n  e:\n    target: {token: {field: /a~2b}}\n    body: {key: k}\n")
        #expect(tilde.first?.message == "\"/a~2b\" is not a JSON Pointer")
    }

    @Test("args given without a key")
    func argsWithoutKey() {
        let e = loadErrors("version: 1\nevents:\n  e:\n    target: {token: t}\n    body:\n      args: [{field: /x}]\n")
        #expect(e.first?.message == "`body` has no localization key but has args")
        #expect(e.first?.line == 6)
    }

    @Test("more than one target kind, and none")
    func targets() {
        let two = loadErrors("version: 1\nevents:\n  e:\n    target: {token: t, topic: news}\n    body: {key: k}\n")
        #expect(two.first?.message == "`target` has more than one kind: token, topic")
        #expect(two.first?.hint == "give exactly one of fid, fids, token, tokens, topic, condition or user")
        let none = loadErrors("version: 1\nevents:\n  e:\n    target: {}\n    body: {key: k}\n")
        #expect(none.first?.message == "`target` names no recipient")
        let missing = loadErrors("version: 1\nevents:\n  e:\n    body: {key: k}\n")
        #expect(missing.first?.message == "event \"e\" has no `target`")
    }

    @Test("invalid YAML points at the problem")
    func invalidYAML() {
        let e = loadErrors("version: 1\nevents:\n  e: [unclosed\n")
        #expect(e.count == 1)
        #expect(e.first?.message.hasPrefix("invalid YAML") == true)
        #expect((e.first?.line ?? 0) >= 3)
    }

    @Test("missing or unsupported version")
    func version() {
        #expect(loadErrors("events: {}\n").first?.message == "missing `version`")
        #expect(loadErrors("version: 2\nevents: {}\n").first?.message == "unsupported version 2")
    }

    @Test("a silent push with a body, and a push with neither title nor body")
    func silentRules() {
        let silentWithBody = loadErrors("version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    silent: true\n")
        #expect(silentWithBody.first?.message == "a silent push has no title, subtitle or body")
        let empty = loadErrors("version: 1\nevents:\n  e:\n    target: {token: t}\n")
        #expect(empty.first?.message == "event \"e\" has neither `title` nor `body`")
    }

    @Test("bad colour, priority, badge and analytics label")
    func optionValues() {
        let e = loadErrors(
            """
            version: 1
            events:
              e:
                target: {token: t}
                body: {key: k}
                priority: urgent
                android: {color: red}
                apns: {badge: many}
                analytics_label: "has space"
            """)
        #expect(
            e.map(\.message) == [
                "priority must be `high` or `normal`",
                "color \"red\" is not #rrggbb",
                "apns.badge must be an integer of at least 0, or `{field: /pointer}` to one",
                "analytics_label must be 1-50 characters of [a-zA-Z0-9-_.~%]",
            ])
    }

    @Test("every error in every file is reported, not just the first")
    func allErrors() {
        let e = loadErrors([
            ("a.yaml", "version: 1\nevents:\n  x:\n    target: {token: t}\n    body: {key: k}\n    ttl: 9w\n"),
            ("b.yaml", "version: 1\nevents:\n  y:\n    target: {token: t, topic: z}\n    body: {key: k}\n    bogus: 1\n"),
        ])
        #expect(e.map(\.file) == ["a.yaml", "b.yaml", "b.yaml"])
    }

    @Test("key derivation: android lower_snake, iOS UPPER_SNAKE; explicit keys win")
    func keyDerivation() throws {
        let set = try load(
            """
            version: 1
            events:
              e:
                target: {token: t}
                title: {key: Welcome_Title}
                body: {key: x, android_key: custom_body, ios_key: CustomBody}
            """)
        let m = try #require(set.mappings["e"])
        #expect(m.title?.key?.androidKey == "welcome_title" && m.title?.key?.iosKey == "WELCOME_TITLE")
        #expect(m.body?.key?.androidKey == "custom_body" && m.body?.key?.iosKey == "CustomBody")
    }
}

@Suite("Run-time failures are values with a reason")
struct RuntimeFailureTests {
    static let yaml = """
        version: 1
        events:
          e:
            target: {token: {field: /token}}
            body: {key: k, args: [{field: /name}]}
            apns: {badge: {field: /count}}
        """

    @Test("invalid JSON, missing type, unknown type")
    func decoding() throws {
        let set = try load(Self.yaml)
        #expect(failure(set, "{not json")?.code == "invalid_json")
        #expect(failure(set, #"{"token":"t"}"#) == .missingEventType("/type"))
        #expect(failure(set, #"{"type":"nope"}"#) == .unknownEventType("nope"))
        #expect(failure(set, #"{"type":"nope"}"#)?.reason == "no mapping for event type \"nope\"")
    }

    @Test("a badge that is not an integer")
    func badge() throws {
        let set = try load(Self.yaml)
        #expect(failure(set, #"{"type":"e","token":"t","name":"n","count":"lots"}"#)?.code == "wrong_type")
        #expect(try bodies(set, #"{"type":"e","token":"t","name":"n","count":"4"}"#)[0].contains(#""badge":4"#))
    }

    @Test("a message over 4096 bytes (2048 for topics) is refused")
    func tooLarge() throws {
        let set = try load(Self.yaml)
        let big = String(repeating: "x", count: 5000)
        guard case .tooLarge(let bytes, let limit)? = failure(set, #"{"type":"e","token":"t","name":"\#(big)","count":1}"#) else {
            Issue.record("expected tooLarge")
            return
        }
        #expect(limit == 4096 && bytes > 4096)
        let topic = try load("version: 1\nevents:\n  e:\n    target: {topic: news}\n    body: {key: k, args: [{field: /v}]}\n")
        #expect(failure(topic, #"{"type":"e","v":"\#(String(repeating: "y", count: 2100))"}"#)?.code == "too_large")
    }

    @Test("an empty or malformed token list, and a bad topic name")
    func targets() throws {
        let set = try load("version: 1\nevents:\n  e:\n    target: {tokens: {field: /t}}\n    body: {key: k}\n")
        #expect(failure(set, #"{"type":"e","t":[]}"#)?.code == "no_targets")
        #expect(failure(set, #"{"type":"e","t":["a",1]}"#)?.code == "wrong_type")
        let topic = try load("version: 1\nevents:\n  e:\n    target: {topic: {field: /t}}\n    body: {key: k}\n")
        #expect(failure(topic, #"{"type":"e","t":"bad topic!"}"#)?.code == "invalid_value")
        #expect(try bodies(topic, #"{"type":"e","t":"/topics/news"}"#)[0].contains(#""topic":"news""#))
    }
}
