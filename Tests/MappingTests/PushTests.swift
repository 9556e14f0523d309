import Testing

@testable import Mapping

/// `pushes:`: several pushes from one event, each with its own target, keys and options,
/// rendered all or nothing (docs/mapping.md, *Several pushes per event*).
@Suite("Several pushes per event")
struct PushTests {
    static let yaml = """
        version: 1
        event: {type: /type, id: /id}
        events:
          order.paid:
            data: {order_id: {field: /order/id}}
            android: {channel_id: orders}
            pushes:
              - name: buyer
                target: {fid: {field: /buyer/fid}}
                title: {key: order_paid_title}
                replace_id: {from: push_id}
              - name: seller
                when: {field: /seller/notify, equals: true}
                project: seller
                target: {fid: {field: /seller/fid}}
                body: {key: new_sale_body, args: [{field: /order/number}]}
                replace_id: {from: push_id}
                android: {priority: high}
        """

    static let event =
        #"{"type":"order.paid","id":"e-42","order":{"id":"o-1","number":"1042"},"buyer":{"fid":"fid-b"},"seller":{"fid":"fid-s","notify":true}}"#

    static func messages(_ yaml: String = yaml, _ json: String = event) throws -> [FCMMessage] {
        try load(yaml).render(EventRecord(value: Array(json.utf8)), now: renderNow).get().messages
    }

    @Test("one message per push, each with its own target, keys, project and replace ID; the defaults merged in")
    func buyerAndSeller() throws {
        let sent = try Self.messages()
        #expect(sent.map { $0.push?.name } == ["buyer", "seller"])
        #expect(sent.map(\.target.value) == ["fid-b", "fid-s"])
        #expect(sent.map { $0.push?.project } == [nil, "seller"])
        let buyer = sent[0].json
        let seller = sent[1].json
        #expect(buyer["android"]?["notification"]?["title_loc_key"] == .string("order_paid_title"))
        #expect(seller["android"]?["notification"]?["body_loc_args"] == .array([.string("1042")]))
        #expect(buyer["android"]?["notification"]?["tag"] == .string("e-42:buyer"))
        #expect(seller["apns"]?["headers"]?["apns-collapse-id"] == .string("e-42:seller"))
        // The defaults: data for both, the android block merged member by member.
        #expect(buyer["data"] == .object([("order_id", .string("o-1"))]) && seller["data"] == buyer["data"])
        #expect(seller["android"]?["notification"]?["channel_id"] == .string("orders") && seller["android"]?["priority"] == .string("HIGH"))
        #expect(buyer["android"]?["priority"] == nil)
    }

    @Test("a push whose when is false is left out; none left is no_push, skipped")
    func when() throws {
        let quiet = Self.event.replacingOccurrences(of: #""notify":true"#, with: #""notify":false"#)
        #expect(try Self.messages(Self.yaml, quiet).map { $0.push?.name } == ["buyer"])
        let yaml = Self.yaml.replacingOccurrences(
            of: "      - name: buyer\n", with: "      - name: buyer\n        when: {field: /buyer/vip, present: true}\n")
        #expect(failure(try load(yaml), quiet) == .noPush(eventType: "order.paid", eventID: "e-42"))
    }

    @Test("all or nothing: a push that cannot render fails the event, and nothing of it is sent")
    func atomic() throws {
        let noNumber = Self.event.replacingOccurrences(of: #","number":"1042""#, with: "")
        #expect(failure(try load(Self.yaml), noNumber) == .missingField(field: "/order/number", role: "body arg 1"))
    }

    @Test("a user with no device leaves out that push only; the event fails as no_devices when no push is left")
    func userWithoutDevices() throws {
        let yaml = """
            version: 1
            events:
              order.paid:
                pushes:
                  - {name: buyer, target: {user: {field: /buyer}}, body: {key: b}}
                  - {name: seller, target: {user: {field: /seller}}, body: {key: s}}
            """
        let set = try load(yaml)
        let lookup: MappingSet.DeviceLookup = { user in user == "bob" ? [UserDevice(kind: .fid, id: "bob-phone")] : [] }
        let record = EventRecord(value: Array(#"{"type":"order.paid","buyer":"ann","seller":"bob"}"#.utf8))
        let rendered = try set.render(record, now: renderNow, devices: lookup).get()
        #expect(rendered.messages.map { "\($0.push?.name ?? "-")/\($0.push?.user ?? "-")/\($0.target.value)" } == ["seller/bob/bob-phone"])
        let nobody = EventRecord(value: Array(#"{"type":"order.paid","buyer":"ann","seller":"cy"}"#.utf8))
        #expect(throws: MappingFailure.noDevices(user: "ann")) { try set.render(nobody, now: renderNow, devices: lookup).get() }
    }

    @Test("a push may have its own variants; lint and the projects check see every push's mappings")
    func pushVariants() throws {
        let yaml = """
            version: 1
            events:
              order.status:
                target: {fid: f}
                pushes:
                  - name: customer
                    variants:
                      - {name: shipped, when: {field: /status, equals: shipped}, body: {key: shipped}}
                      - {name: other, default: true, body: {key: status_changed}}
                  - {name: ops, target: {topic: ops}, body: {key: ops_note}}
            """
        let set = try load(yaml)
        let sent = try set.render(EventRecord(value: Array(#"{"type":"order.status","status":"shipped"}"#.utf8)), now: renderNow).get().messages
        #expect(sent.map { "\($0.push?.name ?? "")/\($0.push?.variant ?? "-")" } == ["customer/shipped", "ops/-"])
        #expect(set.mappings(of: "order.status").count == 3)
    }

    @Test(
        "mistakes are load errors at their line, naming the push",
        arguments: [
            ("      - {target: {fid: f}, body: {key: k}}\n", "a push has no `name`"),
            (
                "      - {name: a, target: {fid: f}, body: {key: k}}\n      - {name: a, target: {fid: g}, body: {key: k}}\n",
                "push name \"a\" is used twice"
            ),
            ("      - {name: a, target: {fid: f}, body: {key: k}, colour: red}\n", "unknown field `colour` in event \"e\" (push \"a\")"),
            ("      - {name: a b, target: {fid: f}, body: {key: k}}\n", "a push's `name` must be 1 or more of [a-zA-Z0-9-_.~%]"),
        ])
    func mistakes(pushes: String, message: String) {
        let errors = loadErrors("version: 1\nevents:\n  e:\n    pushes:\n" + pushes)
        #expect(errors.map(\.message).contains(message), "\(errors)")
    }

    @Test("variants beside pushes are refused; push_id outside pushes too; two pushes sharing {from: event_id} load with a warning")
    func rules() throws {
        let beside = loadErrors("version: 1\nevents:\n  e:\n    unmatched: skip\n    pushes:\n      - {name: a, target: {fid: f}, body: {key: k}}\n")
        #expect(beside.map(\.message) == ["`unmatched` beside `pushes` is ambiguous"])
        let outside = loadErrors("version: 1\nevents:\n  e:\n    target: {fid: f}\n    body: {key: k}\n    replace_id: {from: push_id}\n")
        #expect(outside.map(\.message) == ["`from: push_id` is the event's ID and a push's name: it needs `pushes`"])
        let shared = try load(
            "version: 1\nevents:\n  e:\n    replace_id: {from: event_id}\n    pushes:\n      - {name: a, target: {fid: f}, body: {key: k}}\n      - {name: b, target: {fid: g}, body: {key: k}}\n"
        )
        #expect(
            shared.warnings.map(\.message) == [
                "pushes \"a\" and \"b\" share replace_id {from: event_id}: on a device both reach, one replaces the other"
            ])
    }
}
