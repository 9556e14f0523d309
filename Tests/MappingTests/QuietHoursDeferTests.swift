import Dates
import Mapping
import Preferences
import Testing

/// Quiet hours' `outside: defer` (docs/timers.md): a push inside a user's quiet hours waits until
/// they end, as an instant in UTC computed in the user's zone (DST included); mutes still
/// withhold it at once; critical still bypasses; deferred too often, it is sent.
@Suite("Quiet hours, outside: defer: the push waits until they end")
struct QuietHoursDeferTests {
    static let deferring = UserRulesTests.yaml("category: chats\nquiet_hours: {from: \"22:00\", to: \"07:30\", outside: defer}")

    func render(
        _ yaml: String = deferring, choices: UserChoices = .init(), zone: ZoneRules = UserRulesTests.berlin, now: Int64,
        mayDefer: Bool = true
    ) throws -> MappingSet.Rendered {
        let record = UserRecord(devices: [UserRulesTests.phone], preferences: UserPreferences(choices: choices, zone: zone))
        return try load(yaml).render(
            EventRecord(value: Array(#"{"type":"chat","to":"u-1"}"#.utf8)), now: now, users: { _ in record }, mayDefer: mayDefer
        ).get()
    }

    static func seconds(_ text: String) -> Int64 { RFC3339.parseMilliseconds(text)! / 1000 }

    @Test("loads; inside the window: a deferral to its end, keyed by the user, nothing rendered; outside: sent")
    func defers() throws {
        #expect(try load(Self.deferring).mappings["chat"]?.rules.deferInQuietHours == true)
        #expect(try load(Self.deferring).deferring.map(\.eventType) == ["chat"], "the worker needs the timer topic")
        // 22:30 in Berlin (CET) on 2027-01-15: the window ends at 07:30 CET = 06:30Z.
        let inside = try render(now: UserRulesTests.lateEvening)
        #expect(inside.deferral == Deferral(due: Self.seconds("2027-01-16T06:30:00Z") * 1000, subject: "u-1", reason: .quietHours))
        #expect(inside.messages.isEmpty)
        let outside = try render(now: Self.seconds("2027-01-15T12:00:00Z"))
        #expect(outside.deferral == nil && outside.messages.count == 1)
    }

    @Test("across Berlin's spring-forward night, 01:30 CET waits until 07:30 CEST = 05:30Z; on the fall-back night until 06:30Z")
    func acrossDST() throws {
        let spring = try render(now: Self.seconds("2027-03-28T00:30:00Z"))
        #expect(spring.deferral?.due == Self.seconds("2027-03-28T05:30:00Z") * 1000)
        let autumn = try render(now: Self.seconds("2027-10-31T00:30:00Z"))
        #expect(autumn.deferral?.due == Self.seconds("2027-10-31T06:30:00Z") * 1000)
    }

    @Test("the user's own quiet hours and zone decide; a muted category is withheld now, not deferred; critical is sent")
    func usersOwnMutesCritical() throws {
        let tokyo = try #require(TimeZoneDatabase.shared.zone(named: "Asia/Tokyo"))
        // 21:30Z is 06:30 in Tokyo, inside the user's own 23:00–07:00: until 07:00 JST = 22:00Z.
        let own = try render(
            choices: UserChoices(quietHours: .window(UserRulesTests.window("23:00", "07:00"))), zone: tokyo, now: UserRulesTests.lateEvening)
        #expect(own.deferral?.due == Self.seconds("2027-01-15T22:00:00Z") * 1000)
        let muted = Result { try render(choices: UserChoices(muted: ["chats"]), now: UserRulesTests.lateEvening) }
        guard case .failure(let error) = muted, case .withheld(let w)? = error as? MappingFailure else {
            Issue.record("a muted category is withheld: \(muted)")
            return
        }
        #expect(w.rule == .muted)
        let critical = try render(
            UserRulesTests.yaml("category: chats\ncritical: true\nquiet_hours: {from: \"22:00\", to: \"07:30\", outside: defer}"),
            now: UserRulesTests.lateEvening)
        #expect(critical.deferral == nil && critical.messages.count == 1 && critical.bypassed == [.quietHours])
    }

    @Test("deferred too often (mayDefer false): sent inside the quiet hours, not withheld")
    func sentWhenDeferralsRunOut() throws {
        let rendered = try render(now: UserRulesTests.lateEvening, mayDefer: false)
        #expect(rendered.deferral == nil && rendered.messages.count == 1)
    }

    @Test("devices the event names with `user:`: deferred too, keyed by that user")
    func namedUser() throws {
        let yaml = UserRulesTests.yaml(
            "user: {field: /to}\ncategory: chats\nquiet_hours: {from: \"22:00\", to: \"07:30\", outside: defer}", target: "{token: {field: /to}}")
        let rendered = try render(yaml, now: UserRulesTests.lateEvening)
        #expect(rendered.deferral == Deferral(due: Self.seconds("2027-01-16T06:30:00Z") * 1000, subject: "u-1", reason: .quietHours))
        #expect(rendered.messages.isEmpty)
    }

    @Test("refused within pushes and beside cap or dedup")
    func refused() {
        let pushes = """
            version: 1
            events:
              chat:
                pushes:
                  - name: one
                    target: {user: {field: /to}}
                    body: {key: b}
                    quiet_hours: {from: "22:00", to: "07:30", outside: defer}
            """
        #expect(loadErrors(pushes).contains { $0.message.hasPrefix("quiet_hours.outside: defer does not apply within `pushes` yet") })
        let capped = UserRulesTests.yaml("quiet_hours: {from: \"22:00\", to: \"07:30\", outside: defer}\ncap: {max: 1, per: 1h, by: [user]}")
        do {
            _ = try MappingSet.load(files: [("test.yaml", capped)], statefulRules: true)
            Issue.record("expected a refusal")
        } catch {
            #expect(error.errors.contains { $0.message.hasPrefix("quiet_hours.outside: defer with `cap` or `dedup` is not supported yet") })
        }
    }
}
