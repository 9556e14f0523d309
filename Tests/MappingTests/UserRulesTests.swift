import Dates
import Mapping
import Preferences
import Testing

/// `category`, `critical` and `quiet_hours` (docs/rules.md): loading, and what they withhold
/// for a user's preferences.
@Suite("Per-user rules: mutes, device mutes, quiet hours, critical")
struct UserRulesTests {
    static let berlin = TimeZoneDatabase.shared.zone(named: "Europe/Berlin")!
    /// 2027-01-15T21:30:00Z: 22:30 in Berlin (CET, +1).
    static let lateEvening: Int64 = 1_800_048_600
    static let phone = UserDevice(kind: .token, id: "phone-1234567890", platform: "android")
    static let tablet = UserDevice(kind: .fid, id: "tablet-0987654321", platform: "ios")

    static func yaml(_ rules: String, target: String = "{user: {field: /to}}") -> String {
        "version: 1\nevents:\n  chat:\n    target: \(target)\n    body: {key: b}\n" + rules.split(separator: "\n").map { "    \($0)\n" }.joined()
    }

    static func window(_ from: String, _ to: String) -> QuietWindow { QuietWindow(from: ClockTime(from)!, to: ClockTime(to)!)! }

    func render(
        _ yaml: String, devices: [UserDevice] = [phone, tablet], choices: UserChoices = .init(), zone: ZoneRules = berlin,
        now: Int64 = lateEvening
    ) throws -> Result<MappingSet.Rendered, MappingFailure> {
        let record = UserRecord(devices: devices, preferences: UserPreferences(choices: choices, zone: zone))
        return try load(yaml).render(EventRecord(value: Array(#"{"type":"chat","to":"u-1"}"#.utf8)), now: now, users: { _ in record })
    }

    func withheld(_ result: Result<MappingSet.Rendered, MappingFailure>) -> (WithholdRule, String)? {
        if case .failure(.withheld(let w)) = result { return (w.rule, w.reason) }
        return nil
    }

    @Test("the keys load into the mapping's rules")
    func loading() throws {
        let set = try load(Self.yaml("category: social\ncritical: true\nquiet_hours: {from: \"22:00\", to: \"07:30\", outside: skip}"))
        #expect(set.mappings["chat"]?.rules == UserRules(category: "social", critical: true, quietHours: .window(Self.window("22:00", "07:30"))))
        #expect(try load(Self.yaml("quiet_hours: user")).mappings["chat"]?.rules.quietHours == .usersOwn)
        #expect(try load(Self.yaml("")).mappings["chat"]?.rules.isEmpty == true)
    }

    @Test("what cannot work is refused at its line: no user, an unknown outside, a time that is not one, an empty window, a category that is not one")
    func refused() {
        #expect(
            loadErrors(Self.yaml("category: social", target: "{topic: news}")).map(\.description) == [
                "test.yaml:6:15: error: `category` applies one user's preferences, and a topic or condition push goes to many\n    hint: send to the users' devices (`target: {user: …}`, or `fid`/`token` with `user:`)"
            ])
        #expect(
            loadErrors(Self.yaml("quiet_hours: {from: \"22:00\", to: \"07:00\", outside: later}")).map(\.description) == [
                "test.yaml:6:56: error: quiet_hours.outside must be `skip` or `defer`\n    hint: skip: withheld, counted; defer: sent when the quiet hours end (docs/timers.md)"
            ])
        #expect(
            loadErrors(Self.yaml("quiet_hours: {from: \"24:00\", to: \"7:00\"}")).map(\.description) == [
                "test.yaml:6:25: error: quiet_hours.from \"24:00\" is not a time of day\n    hint: write HH:MM, 00:00 to 23:59, in quotes",
                "test.yaml:6:38: error: quiet_hours.to \"7:00\" is not a time of day\n    hint: write HH:MM, 00:00 to 23:59, in quotes",
            ])
        #expect(
            loadErrors(Self.yaml("quiet_hours: {from: \"22:00\", to: \"22:00\"}")).map(\.description) == [
                "test.yaml:6:38: error: quiet_hours from and to are the same time: an empty window, or the whole day?\n    hint: give a window of some length"
            ])
        #expect(
            loadErrors(Self.yaml("category: Social News")).map(\.description) == [
                "test.yaml:6:15: error: category \"Social News\" is not a category name\n    hint: write a literal: \(NotificationCategory.syntax)"
            ])
        #expect(loadErrors(Self.yaml("quiet_hours: always")).first?.message == "quiet_hours must be `{from: \"22:00\", to: \"07:30\"}` or `user`")
    }

    @Test("critical with nothing to bypass loads with a warning")
    func criticalWarning() throws {
        #expect(
            try load(Self.yaml("critical: true")).warnings.map(\.description) == [
                "test.yaml:6:15: warning: `critical: true` bypasses mutes and quiet hours, and this mapping has neither\n    hint: remove it, or add a `category`"
            ])
    }

    @Test("a muted category withholds the push from every device; a device's mute only from that device; all devices muted withholds it")
    func mutes() throws {
        let yaml = Self.yaml("category: social")
        let muted = try render(yaml, choices: UserChoices(muted: ["marketing", "social"]))
        #expect(withheld(muted)?.0 == .muted)
        #expect(withheld(muted)?.1 == "user u-1 muted the category \"social\"")
        #expect(try render(yaml, choices: UserChoices(muted: ["marketing"])).get().messages.count == 2)

        var phone = Self.phone
        phone.muted = ["social"]
        let one = try render(yaml, devices: [phone, Self.tablet]).get()
        #expect(one.messages.map(\.target.value) == [Self.tablet.id])
        #expect(one.withheldDevices == [WithheldDevice(device: phone, user: "u-1", rule: .deviceMuted)])
        var tablet = Self.tablet
        tablet.muted = ["other", "social"]
        #expect(withheld(try render(yaml, devices: [phone, tablet]))?.0 == .deviceMuted)
        // A mapping without a category cannot be muted.
        #expect(try render(Self.yaml(""), devices: [phone, tablet], choices: UserChoices(muted: ["social"])).get().messages.count == 2)
    }

    @Test(
        "quiet hours in the user's zone: inside withheld with the local time and the window's end; at `to` it goes; the user's own window or off replaces the mapping's"
    )
    func quietHours() throws {
        let yaml = Self.yaml("quiet_hours: {from: \"22:00\", to: \"07:30\"}")
        let inside = try render(yaml)
        #expect(withheld(inside)?.0 == .quietHours)
        #expect(
            withheld(inside)?.1
                == "local time 22:30 in Europe/Berlin is inside the quiet hours 22:00–07:30, which end at 2027-01-16T06:30:00.000Z")
        // 2027-01-16T06:30Z is 07:30 in Berlin: the window is half-open.
        #expect(try render(yaml, now: 1_800_081_000).get().messages.count == 2)
        #expect(withheld(try render(yaml, now: 1_800_080_999))?.0 == .quietHours)
        // The same instant is 21:30 in London: outside.
        #expect(try render(yaml, zone: TimeZoneDatabase.shared.zone(named: "Europe/London")!).get().messages.count == 2)
        // The user's own window replaces the mapping's; off removes it.
        #expect(try render(yaml, choices: UserChoices(quietHours: .window(Self.window("23:00", "06:00")))).get().messages.count == 2)
        #expect(try render(yaml, choices: UserChoices(quietHours: .off)).get().messages.count == 2)
        // `quiet_hours: user`: only the user's own window.
        let own = Self.yaml("quiet_hours: user")
        #expect(try render(own).get().messages.count == 2)
        #expect(withheld(try render(own, choices: UserChoices(quietHours: .window(Self.window("22:15", "22:45")))))?.0 == .quietHours)
        // A mapping without quiet_hours ignores the user's.
        #expect(
            try render(Self.yaml("category: social"), choices: UserChoices(quietHours: .window(Self.window("22:00", "23:00")))).get().messages.count
                == 2)
    }

    @Test("quiet hours across Berlin's spring-forward night: 22:00 CET to 07:30 CEST, 8 h 30 of real time")
    func springForward() throws {
        let yaml = Self.yaml("quiet_hours: {from: \"22:00\", to: \"07:30\"}")
        let start: Int64 = 1_806_181_200  // 2027-03-27T21:00:00Z = 22:00 CET
        let end: Int64 = 1_806_211_800  // 2027-03-28T05:30:00Z = 07:30 CEST
        #expect(end - start == 8 * 3600 + 1800)
        for t in [start, start + 3600, start + 4 * 3600, end - 1] {  // + 4 h: 01:00Z, the first instant of CEST
            #expect(withheld(try render(yaml, now: t))?.0 == .quietHours, "\(t)")
        }
        #expect(try render(yaml, now: start - 1).get().messages.count == 2)
        #expect(try render(yaml, now: end).get().messages.count == 2)
        #expect(withheld(try render(yaml, now: start))?.1.hasSuffix("which end at 2027-03-28T05:30:00.000Z") == true)
    }

    @Test("critical bypasses mutes, device mutes and quiet hours, and says which")
    func critical() throws {
        var phone = Self.phone
        phone.muted = ["security"]
        let rendered = try render(
            Self.yaml("category: security\ncritical: true\nquiet_hours: {from: \"22:00\", to: \"07:30\"}"), devices: [phone, Self.tablet],
            choices: UserChoices(muted: ["security"])
        ).get()
        #expect(rendered.messages.count == 2)
        #expect(rendered.bypassed == [.muted, .deviceMuted, .quietHours])
        #expect(rendered.withheldDevices.isEmpty)
    }

    @Test("in an event with several pushes, a withheld push is left out and the others go")
    func pushes() throws {
        let yaml = """
            version: 1
            events:
              order:
                pushes:
                  - name: buyer
                    target: {user: {field: /buyer}}
                    category: orders
                    body: {key: b}
                  - name: seller
                    target: {user: {field: /seller}}
                    category: orders
                    body: {key: s}
            """
        let records: [String: UserRecord] = [
            "b": UserRecord(devices: [Self.phone], preferences: UserPreferences(choices: UserChoices(muted: ["orders"]))),
            "s": UserRecord(devices: [Self.tablet]),
        ]
        let rendered = try load(yaml).render(
            EventRecord(value: Array(#"{"type":"order","buyer":"b","seller":"s"}"#.utf8)), now: renderNow, users: { records[$0]! }
        ).get()
        #expect(rendered.messages.map(\.target.value) == [Self.tablet.id])
        #expect(rendered.withheldPushes.map { "\($0.push ?? "-"):\($0.rule.rawValue):\($0.user)" } == ["buyer:muted:b"])
        let none = try load(yaml).render(
            EventRecord(value: Array(#"{"type":"order","buyer":"b","seller":"b"}"#.utf8)), now: renderNow, users: { records[$0]! })
        #expect(withheld(none)?.0 == .muted)
    }

    @Test(
        "`user:` beside a device target: the named user's mutes and quiet hours apply; a listed device's mute leaves it out; refused where it cannot work"
    )
    func namedUser() throws {
        let yaml = """
            version: 1
            event: {id: /id}
            events:
              chat:
                target: {fids: {field: /fids}}
                user: {field: /user}
                category: social
                quiet_hours: {from: "22:00", to: "07:30"}
                body: {key: b}
            """
        let event = EventRecord(value: Array(#"{"type":"chat","id":"e-1","user":"u-9","fids":["f-1","f-2"]}"#.utf8))
        func render(_ record: UserRecord, now: Int64 = Self.lateEvening - 4 * 3600) throws -> Result<MappingSet.Rendered, MappingFailure> {
            try load(yaml).render(
                event, now: now,
                users: { user in
                    #expect(user == "u-9")
                    return record
                })
        }
        let quiet = UserPreferences(zone: Self.berlin)
        let sent = try render(UserRecord(devices: [], preferences: quiet)).get()
        #expect(sent.messages.map(\.target.value) == ["f-1", "f-2"] && sent.user == "u-9")
        #expect(withheld(try render(UserRecord(devices: [], preferences: quiet), now: Self.lateEvening))?.0 == .quietHours)
        let muted = UserPreferences(choices: UserChoices(muted: ["social"]), zone: Self.berlin)
        #expect(withheld(try render(UserRecord(devices: [], preferences: muted)))?.0 == .muted)
        let listed = UserRecord(devices: [UserDevice(kind: .fid, id: "f-2", muted: ["social"])], preferences: quiet)
        let one = try render(listed).get()
        #expect(one.messages.map(\.target.value) == ["f-1"])
        #expect(one.withheldDevices.map(\.device.id) == ["f-2"])
        #expect(throws: MappingFailure.registryUnavailable("no device registry is configured (registry.topic)")) {
            try load(yaml).render(event, now: renderNow).get()
        }
        #expect(try load(yaml).projectChoices.first?.namesUser == true)

        #expect(
            loadErrors(Self.yaml("category: social", target: "{fid: {field: /f}}")).first?.description
                == "test.yaml:6:15: error: `category` applies a user's preferences, and this push does not say whose\n    hint: add `user: {field: /user_id}` (the user the devices belong to; their preferences are in the device registry), or target the user"
        )
        #expect(
            loadErrors(Self.yaml("user: {field: /u}\ncategory: social", target: "{topic: news}")).map(\.message) == [
                "`category` applies one user's preferences, and a topic or condition push goes to many",
                "`user` applies one user's preferences, and a topic or condition push goes to many",
            ])
        #expect(
            loadErrors(Self.yaml("user: {field: /u}\ncategory: social")).map(\.message) == [
                "`user` names whose preferences apply, and the target names the user already"
            ])
        #expect(
            try load(Self.yaml("user: {field: /u}", target: "{token: {field: /t}}")).warnings.map(\.message) == [
                "`user` names whose preferences apply, and this mapping has no rule that reads them"
            ])
    }
}
