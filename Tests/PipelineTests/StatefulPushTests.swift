import Mapping
import Pipeline
import Rules
import Testing

/// A rendered push of a mapping with `cap` or `dedup`, as the rules engine will take it: the
/// subject that owns its state, its notification ID and targets (design §5.2).
@Suite("Stateful pushes: subject, notification and targets from a rendered event")
struct StatefulPushTests {
    static let policy = RulesPolicy(sendLimit: 60_000)

    static func rendered(_ rules: String, target: String, event: String) throws -> (MappingSet.Rendered, EventMapping) {
        let yaml =
            "version: 1\nevent: {id: /id}\nevents:\n  chat:\n    target: \(target)\n    body: {key: b}\n"
            + rules.split(separator: "\n").map { "    \($0)\n" }.joined()
        let set = try MappingSet.load(files: [("test.yaml", yaml)], statefulRules: true)
        let devices = [UserDevice(kind: .fid, id: "phone"), UserDevice(kind: .token, id: "tablet")]
        let record = UserRecord(devices: devices)
        let result = set.render(EventRecord(value: Array(event.utf8)), now: 1_800_000_000, users: { _ in record })
        return (try result.get(), try #require(set.mappings["chat"]))
    }

    static func attempt(_ rendered: MappingSet.Rendered, _ mapping: EventMapping) -> NotificationAttempt {
        StatefulPush.attempt(rendered, mapping: "chat", rules: mapping.rules, stateful: mapping.stateful, policy: policy, owner: "w#1")
    }

    @Test("a user target: the user is the subject; both devices are targets; the cap in ms, its window also dedup's")
    func userTarget() throws {
        let (r, m) = try Self.rendered(
            "category: social\ncap: {max: 2, per: 1h, by: [user, category]}", target: "{user: {field: /to}}",
            event: #"{"type":"chat","id":"e-1","to":"alice"}"#)
        let a = Self.attempt(r, m)
        #expect(StatefulPush.subject(of: r) == "alice")
        #expect(a.notification == NotificationID(eventID: "e-1", mapping: "chat", subject: "alice"))
        #expect(a.targets.sorted() == ["fid:phone", "token:tablet"])
        #expect(
            a.subject
                == CapSubject(
                    user: "alice", category: "social", mapping: "chat", devices: ["fid:phone", "token:tablet"].map(DeviceKey.init(target:))))
        #expect(a.caps == [CapRule(max: 2, per: 3_600_000, by: [.user, .category])])
        #expect(a.dedupWindow == 3_600_000, "a cap implies dedup over its window")
    }

    @Test("one device the event names, no user: the target is the subject; a fan-out without a user: the event ID")
    func deviceTargets() throws {
        let (one, m1) = try Self.rendered("dedup: {window: 2h}", target: "{fid: {field: /fid}}", event: #"{"type":"chat","id":"e-2","fid":"f-9"}"#)
        #expect(StatefulPush.subject(of: one) == "f-9")
        #expect(Self.attempt(one, m1).dedupWindow == 7_200_000 && Self.attempt(one, m1).caps.isEmpty)
        let (many, m2) = try Self.rendered("dedup: true", target: "{fids: {field: /fids}}", event: #"{"type":"chat","id":"e-3","fids":["a","b"]}"#)
        #expect(StatefulPush.subject(of: many) == "e-3")
        let a = Self.attempt(many, m2)
        #expect(a.notification == NotificationID(eventID: "e-3", mapping: "chat", subject: "e-3") && a.targets == ["fid:a", "fid:b"])
    }

    @Test("without an event ID in the event, the Kafka coordinates are its ID")
    func coordinates() throws {
        let set = try MappingSet.load(
            files: [("test.yaml", "version: 1\nevents:\n  chat:\n    target: {fid: {field: /fid}}\n    body: {key: b}\n    dedup: true\n")],
            statefulRules: true)
        let rendered = try set.render(EventRecord(value: Array(#"{"type":"chat","fid":"f"}"#.utf8), topic: "events", partition: 3, offset: 42)).get()
        let a = StatefulPush.attempt(
            rendered, mapping: "chat", rules: UserRules(), stateful: StatefulRules(dedupWindow: 60), policy: Self.policy, owner: "w#1")
        #expect(rendered.event.id == "events/3/42")
        #expect(a.notification == NotificationID(eventID: "events/3/42", mapping: "chat", subject: "f"))
    }

    @Test("the same event read twice is the same notification; another event, or another user, is not")
    func identity() throws {
        func n(_ event: String) throws -> NotificationID {
            let (r, m) = try Self.rendered("dedup: true", target: "{user: {field: /to}}", event: event)
            return Self.attempt(r, m).notification
        }
        let first = try n(#"{"type":"chat","id":"e-1","to":"alice"}"#)
        #expect(try n(#"{"type":"chat","id":"e-1","to":"alice"}"#) == first)
        #expect(try n(#"{"type":"chat","id":"e-2","to":"alice"}"#) != first)
        #expect(try n(#"{"type":"chat","id":"e-1","to":"bob"}"#) != first)
    }
}
