import Dates
import Synchronization
import Testing

@testable import Mapping

/// `send_at` (docs/mapping.md, *Sending later*): what loads and what is refused at its line, and
/// what rendering makes of it at a fixed clock (``renderNow``): a push due later is a deferral
/// (nothing looked up), one whose time has come is sent with `max_age` counted from its due time.
@Suite("send_at: loading and rendering")
struct SendAtTests {
    static let mappings = """
        version: 1
        events:
          reminder.due:
            target: {user: {field: /user}}
            body: {key: reminder_body, args: [{field: /title}]}
            send_at: {field: /remind_at}
            max_age: 1h
            ttl: remaining
          trial.started:
            target: {token: {field: /token}}
            user: {field: /user}
            category: billing
            body: {key: trial_ending}
            send_at: {after: 30m}
          digest.ready:
            target: {topic: news}
            body: {key: digest}
            send_at: {field: /at, unit: s}
        """

    static let devices: MappingSet.DeviceLookup = { _ in [UserDevice(kind: .fid, id: "fid-1", platform: "android")] }

    /// `renderNow` plus `seconds`, as RFC 3339.
    static func at(_ seconds: Int64) -> String { RFC3339.format(milliseconds: (renderNow + seconds) * 1000) }

    func render(
        _ json: String, timestamp: Int64? = nil, devices: MappingSet.DeviceLookup? = Self.devices
    ) throws -> Result<
        MappingSet.Rendered, MappingFailure
    > {
        try load(Self.mappings).render(EventRecord(value: Array(json.utf8), timestamp: timestamp), now: renderNow, devices: devices)
    }

    @Test("a field (RFC 3339 or epoch with unit) or a delay after the event's time; each kept as written")
    func loads() throws {
        let set = try load(Self.mappings)
        #expect(set.mappings["reminder.due"]?.sendAt == .field(JSONPointer("/remind_at")!, unit: .milliseconds))
        #expect(set.mappings["trial.started"]?.sendAt == .after(seconds: 1_800, from: .recordTimestamp))
        #expect(set.mappings["digest.ready"]?.sendAt == .field(JSONPointer("/at")!, unit: .seconds))
        #expect(set.deferring.map(\.eventType).sorted() == ["digest.ready", "reminder.due", "trial.started"])
        let withOccurredAt = try load(
            "version: 1\nevents:\n  e:\n    target: {topic: t}\n    body: {key: b}\n    max_age: 2h\n    occurred_at: {field: /t}\n    send_at: {after: 1h}\n"
        )
        #expect(withOccurredAt.mappings["e"]?.sendAt == .after(seconds: 3_600, from: .field(JSONPointer("/t")!, unit: .milliseconds)))
        #expect(withOccurredAt.mappings["e"]?.sendAt?.summary == "1h after /t")
    }

    @Test(
        "refused at its line: not a mapping, both or neither form, a bad delay or one over 30 days, a bad unit",
        arguments: [
            ("send_at: /remind_at", "send_at must be `{field: /pointer}` or `{after: duration}`"),
            ("send_at: {after: soon}", "send_at.after \"soon\" is not a duration over 0"),
            ("send_at: {after: 0s}", "send_at.after \"0s\" is not a duration over 0"),
            ("send_at: {after: 31d}", "send_at.after 31d is more than 30d"),
            ("send_at: {after: 9999999999999999s}", "send_at.after 9999999999999999s is more than 30d"),
            ("send_at: {after: 1h, field: /t}", "unknown field `field` in `send_at`"),
            ("send_at: {unit: s}", "`send_at` must be `{field: /pointer}`"),
            ("send_at: {field: /t, unit: h}", "send_at unit must be `ms` or `s`"),
        ])
    func refused(line: String, message: String) {
        let errors = loadErrors("version: 1\nevents:\n  e:\n    target: {topic: t}\n    body: {key: b}\n    \(line)\n")
        #expect(errors.contains { $0.message.hasPrefix(message) && $0.line == 6 }, "\(errors)")
    }

    @Test("send_at within pushes, beside cap or dedup, or on a Live Activity mapping is refused saying why")
    func refusedCombinations() throws {
        let pushes = """
            version: 1
            events:
              e:
                pushes:
                  - name: now
                    target: {topic: t}
                    body: {key: b}
                  - name: later
                    target: {topic: t}
                    body: {key: b}
                    send_at: {after: 1h}
            """
        #expect(loadErrors(pushes).contains { $0.message.hasPrefix("`send_at` does not apply within `pushes` yet") && $0.line == 11 })
        let capped = UserRulesTests.yaml("send_at: {after: 1h}\ncap: {max: 1, per: 1h, by: [user]}")
        let errors: [MappingLoadError]
        do {
            _ = try MappingSet.load(files: [("test.yaml", capped)], statefulRules: true)
            errors = []
        } catch {
            errors = error.errors
        }
        #expect(errors.contains { $0.message.hasPrefix("`send_at` with `cap` or `dedup` is not supported yet") }, "\(errors)")
        let activity = """
            version: 1
            events:
              order.created:
                target: {token: {field: /device_token}}
                activity: {key: {field: /order_id}, event: start, token: {field: /start_token}, attributes_type: A, content_state: {s: x}}
                send_at: {after: 1h}
            """
        #expect(loadErrors(activity).contains { $0.message.hasPrefix("`send_at`") && $0.line == 6 }, "\(loadErrors(activity))")
    }

    @Test("due later: a deferral keyed by the user, with no messages, and the registry not read")
    func later() throws {
        let looked = Mutex(0)
        let result = try render(
            #"{"type":"reminder.due","user":"u-7","title":"Dentist","remind_at":"\#(Self.at(3_600))"}"#,
            devices: { _ in
                looked.withLock { $0 += 1 }
                return []
            })
        let rendered = try result.get()
        #expect(rendered.deferral == Deferral(due: (renderNow + 3_600) * 1000, subject: "u-7"))
        #expect(rendered.messages.isEmpty && looked.withLock { $0 } == 0)
    }

    @Test("due now or past: sent now, max_age and ttl: remaining counted from the due time, not the event's")
    func due() throws {
        // Written two hours ago (older than max_age 1h), due ten minutes ago: 50 minutes left.
        let json = #"{"type":"reminder.due","user":"u-7","title":"Dentist","remind_at":"\#(Self.at(-600))"}"#
        let rendered = try render(json, timestamp: (renderNow - 7_200) * 1000).get()
        #expect(rendered.deferral == nil && rendered.messages.count == 1)
        let message = try JSONParser.parse(try #require(rendered.messages.first).encoded)
        #expect(message["android"]?["ttl"]?.stringValue == "3000s")
        // Due 61 minutes ago: too old, measured from its send_at.
        let late = try render(#"{"type":"reminder.due","user":"u-7","title":"x","remind_at":"\#(Self.at(-3_660))"}"#)
        guard case .failure(.tooOld(let old)) = late else {
            Issue.record("expected too_old, got \(late)")
            return
        }
        #expect(old.measuredFrom == "its send_at" && old.ageMilliseconds == 3_660_000)
    }

    @Test("after: from the Kafka timestamp; the subject is the user of `user:`, else the event's ID; epoch seconds read as such")
    func afterAndSubjects() throws {
        let trial = try render(#"{"type":"trial.started","token":"t","user":"u-9"}"#, timestamp: (renderNow - 600) * 1000).get()
        #expect(trial.deferral == Deferral(due: (renderNow + 1_200) * 1000, subject: "u-9"))
        let sentNow = try render(#"{"type":"trial.started","token":"t","user":"u-9"}"#, timestamp: (renderNow - 1_800) * 1000).get()
        #expect(sentNow.deferral == nil && sentNow.messages.count == 1, "exactly due: sent")
        let digest = try render(#"{"type":"digest.ready","id":"d-1","at":\#(renderNow + 5)}"#).get()
        #expect(digest.deferral?.due == (renderNow + 5) * 1000)
        #expect(digest.deferral?.subject == digest.event.id)
    }

    @Test("a send_at that is no time is the field's fault: invalid_value; a missing Kafka timestamp for after: invalid_event_time")
    func unreadable() throws {
        let bad = try render(#"{"type":"reminder.due","user":"u","title":"x","remind_at":"tomorrow"}"#)
        guard case .failure(.invalidValue(let field, let reason)) = bad else {
            Issue.record("expected invalid_value, got \(bad)")
            return
        }
        #expect(field == "/remind_at" && reason.hasPrefix("send_at: "))
        let noTimestamp = try render(#"{"type":"trial.started","token":"t","user":"u"}"#)
        guard case .failure(.invalidEventTime) = noTimestamp else {
            Issue.record("expected invalid_event_time, got \(noTimestamp)")
            return
        }
    }
}
