import JSON
import Testing

@testable import Mapping

/// The `fcm:` overlay (docs/mapping.md, *Any other FCM field*): loaded against FCM's schema,
/// merged into the rendered message, the same bytes through the template.
@Suite("The fcm: overlay")
struct OverlayTests {
    static let mappings = """
        version: 1
        events:
          order.shipped:
            target: {token: {field: /token}}
            body: {key: shipped}
            fcm:
              android:
                bandwidth_constrained_ok: true
                notification:
                  proxy: DENY
                  vibrate_timings: ["0s", "0.2s", "0.1s", "0.2s"]
                  lightSettings: {color: {red: 1.0, green: 0.4, blue: 0.0}, light_on_duration: "0.5s", light_off_duration: "1.5s"}
                  notification_count: {field: /count}
                  sticky: {field: /sticky, default: "false"}
              apns:
                headers: {apns-id: {field: /push_uuid}}
                payload:
                  aps: {filter-criteria: work, relevance-score: {field: /relevance, default: "0.5"}}
                  deeplink: {field: /url}
                  literal: {value: {field: not-a-pointer}}
              webpush:
                notification:
                  actions: [{action: open, title: "Open"}]
                  requireInteraction: true
          chat.silent:
            target: {topic: chats}
            silent: true
            data: {k: v}
            fcm: {android: {direct_boot_ok: {field: /boot}, ttl: {field: /ttl}, priority: {field: /prio}}}
        """

    static let events = [
        #"{"type":"order.shipped","id":"1","token":"t","count":3,"sticky":true,"push_uuid":"u-1","url":{"a":[1,"x"]}}"#,
        #"{"type":"order.shipped","id":"2","token":"t","count":4,"push_uuid":"u-2","url":"https://x.test"}"#,
        #"{"type":"order.shipped","id":"3","token":"t","count":"many","push_uuid":"u","url":1}"#,
        #"{"type":"order.shipped","id":"4","token":"t","count":4294967296,"push_uuid":"u","url":1}"#,
        #"{"type":"order.shipped","id":"5","token":"t","count":1,"sticky":"yes","push_uuid":"u","url":1}"#,
        #"{"type":"order.shipped","id":"6","token":"t","count":1,"push_uuid":"u"}"#,
        #"{"type":"chat.silent","id":"7","boot":true,"ttl":"90.5s","prio":"HIGH"}"#,
        #"{"type":"chat.silent","id":"8","boot":true,"ttl":"90 s","prio":"HIGH"}"#,
        #"{"type":"chat.silent","id":"9","boot":true,"ttl":"1s","prio":"URGENT"}"#,
        #"{"type":"order.shipped","id":"10","token":"t","count":1,"push_uuid":"u","url":1,"relevance":"high"}"#,
    ]

    @Test("the overlay's fields land in the message, snake_case, beside what the mapping renders")
    func renders() throws {
        let set = try load(Self.mappings)
        let body = try #require(try bodies(set, Self.events[0]).first)
        let message = try #require(try JSONParser.parse(Array(body.utf8))["message"])
        let android = try #require(message["android"])
        #expect(android["bandwidth_constrained_ok"] == .bool(true))
        #expect(android["notification"]?["body_loc_key"] == .string("shipped"))
        #expect(android["notification"]?["proxy"] == .string("DENY"))
        #expect(android["notification"]?["notification_count"] == .int(3))
        #expect(android["notification"]?["sticky"] == .bool(true))
        #expect(android["notification"]?["light_settings"]?["color"]?["green"] == .double(0.4))
        #expect(android["notification"]?["light_settings"]?["light_on_duration"] == .string("0.5s"))
        #expect(message["apns"]?["headers"]?["apns-id"] == .string("u-1"))
        #expect(message["apns"]?["payload"]?["deeplink"] == .object([("a", .array([.int(1), .string("x")]))]))
        #expect(message["apns"]?["payload"]?["literal"] == .object([("field", .string("not-a-pointer"))]))
        #expect(message["apns"]?["payload"]?["aps"]?["filter-criteria"] == .string("work"))
        #expect(message["apns"]?["payload"]?["aps"]?["relevance-score"] == .double(0.5))
        #expect(message["apns"]?["payload"]?["aps"]?["alert"]?["loc-key"] == .string("SHIPPED"))
        #expect(message["webpush"]?["notification"]?["requireInteraction"] == .bool(true))
        // A default is converted as a literal would be.
        let second = try JSONParser.parse(Array(try #require(try bodies(set, Self.events[1]).first).utf8))
        #expect(second["message"]?["android"]?["notification"]?["sticky"] == .bool(false))
        #expect(second["message"]?["apns"]?["payload"]?["deeplink"] == .string("https://x.test"))
    }

    @Test("a wrong event value fails the event as other values do")
    func failures() throws {
        let set = try load(Self.mappings)
        #expect(failure(set, Self.events[2])?.code == "wrong_type")
        #expect(failure(set, Self.events[3])?.code == "invalid_value")
        #expect(failure(set, Self.events[4])?.code == "wrong_type")
        #expect(failure(set, Self.events[5])?.code == "missing_field")
        #expect(failure(set, Self.events[7])?.code == "invalid_value")
        #expect(failure(set, Self.events[8])?.code == "invalid_value")
        #expect(failure(set, Self.events[9])?.code == "wrong_type")  // an aps key's type, per event
        let silent = try JSONParser.parse(Array(try #require(try bodies(set, Self.events[6]).first).utf8))
        #expect(silent["message"]?["android"]?["ttl"] == .string("90.5s"))
        #expect(silent["message"]?["android"]?["priority"] == .string("HIGH"))
    }

    @Test("template and tree agree, byte for byte and failure for failure", arguments: events)
    func templateParity(json: String) throws {
        let set = try load(Self.mappings)
        let event = try set.eventFormat.decode(EventRecord(value: Array(json.utf8))).get()
        let mapping = try #require(set.mappings[event.type])
        let template = try #require(mapping.template)
        let viaTemplate: Result<[FCMMessage], MappingFailure> = Result { () throws(MappingFailure) in try template.render(event, now: renderNow) }
        let viaTree: Result<[FCMMessage], MappingFailure> = Result { () throws(MappingFailure) in try mapping.renderTree(event, now: renderNow) }
        switch (viaTemplate, viaTree) {
        case (.success(let a), .success(let b)):
            #expect(a.map { String(decoding: $0.encoded, as: UTF8.self) } == b.map { String(decoding: $0.encoded, as: UTF8.self) })
        case (.failure, .failure(let b)):
            #expect(mapping.render(event, now: renderNow) == .failure(b))
        default:
            Issue.record("template \(viaTemplate) vs tree \(viaTree)")
        }
        // Decoding only the fields the mappings read (the templates' holes) renders the same.
        let record = EventRecord(value: Array(json.utf8))
        #expect(set.render(record, now: renderNow).map(\.messages) == viaTree)
    }

    static func overlay(_ fcm: String, rest: String = "body: {key: k}") -> String {
        "version: 1\nevents:\n  e:\n    target: {token: t}\n    \(rest)\n    fcm:\n"
            + fcm.split(separator: "\n").map { "      " + $0 }.joined(separator: "\n")
            + "\n"
    }

    @Test(
        "what the overlay refuses, with file:line and what to do",
        arguments: [
            ("andriod: {}", 6, "unknown field `andriod` in `fcm`", "did you mean `android`?"),
            ("android: {notification: {chanel_id: c}}", 6, "unknown field `chanel_id` in `fcm.android.notification`", "did you mean `channel_id`?"),
            ("token: t", 6, "`fcm.token` is a target", "target:"),
            ("topic: t", 6, "`fcm.topic` is a target", "target:"),
            ("name: n", 6, "`fcm.name` is output only", nil),
            ("data: {a: b}", 6, "`fcm.data` is the message's data", "`data:`"),
            ("androidV2: {}", 6, "`fcm.android_v2` is refused", nil),
            ("android: {notification: {bypass_proxy_notification: true}}", 6, "is deprecated", nil),
            ("apns: {headers: {apns-topic: com.x}}", 6, "`fcm.apns.headers.apns-topic` is refused", nil),
            ("android: {priority: {field: /p}}", 6, "", nil),
            ("android: {notification: {light_settings: {color: {red: 1}}}}", 6, "needs `light_off_duration` and `light_on_duration`", nil),
            ("apns: {fcm_options: {image: 'https://x.test/a.png'}}", 6, "mutable-content: 1", "`image:`"),
            (
                "android: {notification: {light_settings: {color: {red: 255}, light_on_duration: 1s, light_off_duration: 1s}}}", 6,
                "from 0 to 1", nil
            ),
            ("android: {notification: {proxy: DENIED}}", 6, "must be one of PROXY_UNSPECIFIED", nil),
            ("android: {direct_boot_ok: yes}", 6, "must be true or false", nil),
            ("android: {notification: {notification_count: 1.5}}", 6, "must be a 32-bit integer", nil),
            ("android: {notification: {vibrate_timings: [1s, 200ms]}}", 6, "must be a duration", nil),
            ("android: {notification: {event_time: '2026-11-22T10:00:00'}}", 6, "RFC 3339", nil),
            ("android: {notification: {color: red}}", 6, "#rrggbb", nil),
            ("android: {ttl: 3000000s}", 6, "4 weeks", nil),
            ("apns: {payload: {aps: {badges: 1}}}", 6, "unknown key `badges` in `fcm.apns.payload.aps`", "did you mean `badge`?"),
            ("apns: {payload: {aps: {badge: -1}}}", 6, "must be an integer of at least 0", nil),
            ("apns: {payload: {aps: {alert: {titel: x}}}}", 6, "unknown key `titel`", "did you mean `title`?"),
            ("apns: {payload: {aps: {sound: {critical: 1, volume: 2}}}}", 6, "must be a number from 0 to 1", nil),
            ("apns: {payload: {aps: {interruption-level: urgent}}}", 6, "must be one of passive", nil),
            ("android: {notification: {body_loc_args: [a]}}", 6, "needs android.notification.body_loc_key", nil),
        ] as [(String, Int, String, String?)])
    func refused(fcm: String, line: Int, message: String, hint: String?) {
        let rest = fcm.contains("priority") ? "body: {key: k}\n    priority: high" : "title: {key: k}"
        let errors = loadErrors(Self.overlay(fcm, rest: rest))
        #expect(errors.count == 1, "\(errors)")
        guard let error = errors.first else { return }
        #expect(error.line == line + rest.split(separator: "\n").count, "\(error)")
        #expect(message.isEmpty || error.message.contains(message), "\(error)")
        if let hint { #expect(error.hint?.contains(hint) == true, "\(error)") }
    }

    @Test("a leaf the mapping's own keys render is a conflict, found by rendering them, whichever key it is")
    func conflicts() {
        let priority = loadErrors(Self.overlay("android: {priority: HIGH}", rest: "body: {key: k}\n    priority: high"))
        #expect(priority.map(\.message) == ["`fcm.android.priority` sets android.priority, which `priority` already sets: keep one"])
        let channel = loadErrors(Self.overlay("android: {notification: {channel_id: c}}", rest: "body: {key: k}\n    android: {channel_id: x}"))
        #expect(
            channel.first?.message
                == "`fcm.android.notification.channel_id` sets android.notification.channel_id, which `android.channel_id` already sets: keep one")
        let loc = loadErrors(Self.overlay("apns: {payload: {aps: {alert: {loc-key: X}}}}"))
        #expect(loc.first?.message.contains("sets apns.payload.aps.alert.loc-key") == true, "\(loc)")
        let expiration = loadErrors(Self.overlay("apns: {headers: {apns-expiration: '0'}}", rest: "body: {key: k}\n    ttl: 0"))
        #expect(expiration.count == 1, "\(expiration)")
        // Header names in any case; FCM's shared notification over what a platform's shows.
        let header = loadErrors(Self.overlay("apns: {headers: {APNs-Push-Type: alert}}"))
        #expect(header.first?.message.contains("sets apns.headers.apns-push-type") == true, "\(header)")
        let shared = loadErrors(Self.overlay("notification: {title: Hi}", rest: "title: {key: t}"))
        #expect(shared.first?.message.contains("sets android.notification.title_loc_key") == true, "\(shared)")
        #expect(loadErrors(Self.overlay("android: {notification: {body: Hi}}")).count == 1)
        // A whole object over a rendered one conflicts too.
        let aps = loadErrors(Self.overlay("apns: {payload: {aps: {alert: Hi}}}"))
        #expect(aps.count == 1, "\(aps)")
    }

    @Test(
        "a silent push takes nothing shown from the overlay",
        arguments: [
            "android: {notification: {proxy: DENY}}", "apns: {payload: {aps: {badge: 1}}}", "webpush: {notification: {title: x}}",
            "notification: {title: x}",
        ])
    func silent(fcm: String) {
        let errors = loadErrors(Self.overlay(fcm, rest: "silent: true"))
        #expect(errors.count == 1 && errors[0].message.contains("a silent push shows no notification"), "\(errors)")
    }

    @Test("a platform the push does not go to")
    func platforms() {
        let errors = loadErrors(Self.overlay("android: {direct_boot_ok: true}", rest: "body: {key: k}\n    platforms: [ios]"))
        #expect(errors.map(\.message) == ["`fcm.android` is for android, and this push does not go to android"])
    }

    @Test("FCM's size limit holds for the whole message")
    func tooLarge() throws {
        let set = try load(Self.overlay("apns: {payload: {note: {field: /note}}}"))
        let note = String(repeating: "x", count: 4000)
        #expect(failure(set, #"{"type":"e","note":"\#(note)"}"#)?.code == "too_large")
        #expect(failure(set, #"{"type":"e","note":"short"}"#) == nil)
    }

    @Test("an unknown Web Notification option warns and loads")
    func webWarning() throws {
        let set = try load(Self.overlay("webpush: {notification: {title: x, requireInteration: true}}"))
        #expect(set.warnings.count == 1)
        #expect(set.warnings.first?.hint == "did you mean `requireInteraction`?")
    }
}
