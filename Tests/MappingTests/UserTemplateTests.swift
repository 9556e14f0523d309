import Dates
import Preferences
import Testing

@testable import Mapping

/// Pushes to a user's devices render through the byte template (each device's `fid` or `token`
/// member spliced in where the writer's key order puts it), and produce what the tree path
/// produced before they had one: the same bytes, devices, projects, withheld devices and
/// failures, for users of 1, 2 and 5 devices of mixed kinds, platforms and apps, with and
/// without the per-user rules, in variants and several pushes.
@Suite("User targets: the template renders what the tree renders")
struct UserTemplateTests {
    static let mappings = """
        version: 1
        event: {type: /type, id: /id}
        events:
          plain:
            target: {user: {field: /to}}
            title: {key: t, args: [{field: /name}]}
            body: {key: b, args: [{field: /n}, {field: /name}]}
            collapse_key: {field: /chat}
            replace_id: {from: event_id}
          every.platform:
            target: {user: {field: /to}}
            platforms: [android, ios, web]
            title: {field: /headline}
            body: {key: b, args: [{field: /name}], fallback: {field: /headline}}
            badge: {field: /n}
            ttl: 1h
            priority: high
            data: {chat: {field: /chat}, screen: chat}
            android: {channel_id: messages, color: "#00ff00"}
            apns: {sound: default, thread_id: {field: /chat}}
            web: {link: {field: /url}}
            analytics_label: lbl
          silent.data:
            target: {user: {field: /to}, platform: [android, web]}
            platforms: [android, web]
            silent: true
            data: {v: {field: /name}}
          filtered:
            target: {user: {field: /to}, platform: ios, app: [driver, rider]}
            platforms: [ios]
            body: {key: b}
            apns: {collapse_id: {field: /chat}}
          overlay:
            target: {user: {field: /to}}
            body: {key: b}
            fcm:
              android: {direct_boot_ok: true}
              apns: {headers: {apns-id: {field: /uuid}}}
          ruled:
            target: {user: {field: /to}}
            category: social
            quiet_hours: {from: "22:00", to: "07:30"}
            title: {key: t, args: [{field: /name}]}
            data: {chat: {field: /chat}}
          critical:
            target: {user: {field: /to}}
            category: social
            critical: true
            quiet_hours: {from: "22:00", to: "07:30"}
            body: {key: b}
          named:
            target: {tokens: {field: /tokens}}
            user: {field: /to}
            category: social
            body: {key: b}
          order.status:
            target: {user: {field: /to}}
            replace_id: {field: /chat}
            data: {chat: {field: /chat}}
            variants:
              - name: shipped
                when: {field: /status, equals: shipped}
                body: {key: shipped, args: [{field: /name}]}
                ttl: 2d
              - name: nearby
                when: {field: /status, equals: nearby}
                priority: high
                body: {key: nearby}
                android: {channel_id: urgent}
              - name: refunded
                when: {field: /status, equals: refunded}
                target: {topic: refunds}
                body: {key: refund}
            unmatched: skip
          order.paid:
            data: {chat: {field: /chat}}
            pushes:
              - {name: buyer, target: {user: {field: /to}}, body: {key: b}, replace_id: {from: push_id}}
              - {name: seller, target: {user: {field: /seller}}, body: {key: s}, category: social}
        """

    static let types = ["plain", "every.platform", "silent.data", "filtered", "overlay", "ruled", "critical", "named", "order.status", "order.paid"]

    static let berlin = TimeZoneDatabase.shared.zone(named: "Europe/Berlin")!
    static let losAngeles = TimeZoneDatabase.shared.zone(named: "America/Los_Angeles")!

    /// By user ID. At ``renderNow`` (08:00Z) it is 09:00 in Berlin and midnight in Los Angeles,
    /// inside the quiet hours.
    static let users: [String: UserRecord] = {
        let android = UserDevice(kind: .token, id: "tok-android-1", platform: "android")
        let ios = UserDevice(kind: .fid, id: "fid-ios-1", platform: "ios")
        let five = [
            UserDevice(kind: .token, id: "tok-a", platform: "android", app: "driver"),
            UserDevice(kind: .fid, id: "fid-i", platform: "ios", app: "rider", muted: ["social"]),
            UserDevice(kind: .token, id: "tok-web", platform: "web"),
            UserDevice(kind: .fid, id: #"fid "quoted" \ é"#),
            UserDevice(kind: .fid, id: "fid-a2", platform: "android", muted: ["news"]),
        ]
        var mutedAll = [android, ios]
        for i in mutedAll.indices { mutedAll[i].muted = ["social"] }
        func at(_ zone: ZoneRules, muted: [String] = []) -> UserPreferences {
            UserPreferences(choices: UserChoices(timeZone: zone.name, muted: muted), zone: zone)
        }
        return [
            "one": UserRecord(devices: [android], preferences: at(berlin)),
            "one.ios": UserRecord(devices: [ios], preferences: at(berlin)),
            "two": UserRecord(devices: [android, ios], preferences: at(berlin)),
            "five": UserRecord(devices: five, preferences: at(berlin)),
            "muted": UserRecord(devices: [android, ios], preferences: at(berlin, muted: ["social"])),
            "devices.muted": UserRecord(devices: mutedAll, preferences: at(berlin)),
            "night": UserRecord(devices: five, preferences: at(losAngeles)),
            "web.only": UserRecord(devices: [five[2]], preferences: at(berlin)),
            "none": UserRecord(devices: []),
        ]
    }()

    static let lookup: MappingSet.UserLookup = { user in
        guard let record = users[user] else { throw RegistryDown() }
        return record
    }

    struct RegistryDown: Error {}

    static func event(_ type: String, to user: String, _ extra: String = "") -> String {
        #"{"type":"\#(type)","id":"e-\#(user)","to":"\#(user)","seller":"two","name":"Zoë \"Z\"","n":3,"chat":"c-7","#
            + #""headline":"Hi","url":"https://x.example/c","uuid":"123e4567-e89b-12d3-a456-426614174000","tokens":["tok-a","fid-i"],"status":"shipped"\#(extra)}"#
    }

    static let events: [String] =
        types.flatMap { type in users.keys.sorted().map { event(type, to: $0) } + [event(type, to: "unknown")] } + [
            event("order.status", to: "five", #","status":"nearby""#),
            event("order.status", to: "five", #","status":"refunded""#),
            event("order.status", to: "five", #","status":"lost""#),
            event("plain", to: "", ""),
            event("every.platform", to: "two", #","url":"http://x.example/c""#),
            event("every.platform", to: "five", #","n":"many""#),
            #"{"type":"plain","id":"e","name":"x","n":1,"chat":"c"}"#,
            #"{"type":"order.paid","id":"e","to":"five","seller":"muted","chat":"c"}"#,
        ]

    /// Everything a render gives, as text: each message's bytes, target, project and push.
    static func summary(_ result: Result<MappingSet.Rendered, MappingFailure>) -> String {
        switch result {
        case .failure(let f): return "failure \(f)"
        case .success(let r):
            let messages = r.messages.map { m in
                "\(String(decoding: m.encoded, as: UTF8.self)) to \(m.target.kind.rawValue):\(m.target.value) project \(m.project ?? "-") push \(String(describing: m.push))"
            }
            let rest = [
                "user \(r.user ?? "-") variant \(r.variant?.label ?? "-") project \(r.project ?? "-")",
                "withheld devices \(r.withheldDevices) bypassed \(r.bypassed) withheld pushes \(r.withheldPushes)",
            ]
            return (messages + rest).joined(separator: "\n")
        }
    }

    @Test("every mapping with a user target compiles to a template")
    func compiles() throws {
        let set = try load(Self.mappings)
        for type in ["plain", "every.platform", "silent.data", "filtered", "overlay", "ruled", "critical"] {
            #expect(set.mappings[type]?.template?.splices.count == 2, "\(type)")
        }
        #expect(set.variantSets["order.status"]?.variants.allSatisfy { $0.template != nil } == true)
        #expect(set.pushSets["order.paid"]?.pushes.allSatisfy { $0.mappings.allSatisfy { $0.template != nil } } == true)
    }

    @Test("template and tree agree, byte for byte, device for device and failure for failure", arguments: events)
    func agree(json: String) throws {
        let set = try load(Self.mappings)
        let record = EventRecord(value: Array(json.utf8), topic: "events", partition: 1, offset: 9)
        let viaTemplate = set.render(record, now: renderNow, users: Self.lookup)
        let viaTree = set.treeOnly.render(record, now: renderNow, users: Self.lookup)
        #expect(Self.summary(viaTemplate) == Self.summary(viaTree))
    }

    @Test("users of one, two and five devices get one message each, FID or token, withheld devices left out")
    func counts() throws {
        let set = try load(Self.mappings)
        func sent(_ type: String, _ user: String) throws -> [String] {
            let record = EventRecord(value: Array(Self.event(type, to: user).utf8))
            return try set.render(record, now: renderNow, users: Self.lookup).get().messages.map { "\($0.target.kind.rawValue):\($0.target.value)" }
        }
        #expect(try sent("plain", "one") == ["token:tok-android-1"])
        #expect(try sent("plain", "one.ios") == ["fid:fid-ios-1"])
        #expect(try sent("plain", "two") == ["token:tok-android-1", "fid:fid-ios-1"])
        #expect(try sent("every.platform", "five") == ["token:tok-a", "fid:fid-i", "token:tok-web", #"fid:fid "quoted" \ é"#, "fid:fid-a2"])
        #expect(try sent("ruled", "five") == ["token:tok-a", #"fid:fid "quoted" \ é"#, "fid:fid-a2"])
        let body = try set.render(EventRecord(value: Array(Self.event("plain", to: "five").utf8)), now: renderNow, users: Self.lookup).get()
        #expect(String(decoding: body.messages[2].encoded, as: UTF8.self).contains(#""fid":"fid \"quoted\" \\ é""#))
    }
}

extension MappingSet {
    /// The same mappings rendered only by the tree path, as user targets were before they had
    /// a template: no templates, so every field of an event is decoded.
    var treeOnly: MappingSet {
        func strip(_ m: EventMapping) -> EventMapping {
            var m = m
            m.template = nil
            return m
        }
        func strip(_ set: VariantSet) -> VariantSet {
            var set = set
            set.variants = set.variants.map(strip)
            return set
        }
        let pushSets = pushSets.mapValues { set in
            var set = set
            for i in set.pushes.indices {
                switch set.pushes[i].route {
                case .one(let m): set.pushes[i].route = .one(strip(m))
                case .variants(let variants): set.pushes[i].route = .variants(strip(variants))
                }
            }
            return set
        }
        let mappings = mappings.mapValues(strip)
        return MappingSet(
            mappings: mappings, eventFormat: eventFormat, templates: [:], fields: EventFields(format: eventFormat, mappings: mappings.values),
            maxAges: maxAges, projects: projects, userTargets: userTargets, namedUsers: namedUsers, warnings: warnings,
            variantSets: variantSets.mapValues(strip), pushSets: pushSets)
    }
}
