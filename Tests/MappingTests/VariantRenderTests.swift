import Testing

@testable import Mapping

/// `variants:` rendered: the first variant whose conditions hold is merged with the base and
/// sent; templates and the tree agree; errors point into the file (docs/mapping.md, *Variants*).
@Suite("Variants: choosing, merging, rendering")
struct VariantRenderTests {
    static let mappings = """
        version: 1
        events:
          order.status_changed:
            target: {token: {field: /token}}
            replace_id: {field: /order_id}
            data: {order_id: {field: /order_id}, screen: order_detail}
            android: {channel_id: orders, color: "#112233"}
            variants:
              - name: shipped
                when: {field: /status, equals: shipped}
                title: {key: order_shipped_title}
                body: {key: order_shipped_body, args: [{field: /order_number}]}
                ttl: 2d
              - name: out_for_delivery
                when: {field: /status, one_of: [out_for_delivery, nearby]}
                body: {key: order_out_for_delivery_body, args: [{field: /eta_text}]}
                priority: high
                android: {channel_id: urgent}
                data: {screen: tracking}
              - name: delivered_with_photo
                when: [{field: /status, equals: delivered}, {field: /proof_photo_url, present: true}]
                body: {key: order_delivered_body, args: [{field: /order_number}]}
                image: {field: /proof_photo_url}
              - name: delivered
                when: {field: /status, equals: delivered}
                body: {key: order_delivered_body, args: [{field: /order_number}]}
              - name: refunded
                when: {field: /refund_cents, equals: 0}
                target: {topic: refunds}
                body: {key: refund_body}
            unmatched: skip
        """

    static func event(_ members: String) -> String {
        #"{"type":"order.status_changed","id":"e1","token":"tok","order_id":"o-7","order_number":1234,"eta_text":"5 min",\#(members)}"#
    }

    static let events = [
        event(#""status":"shipped""#),
        event(#""status":"nearby""#),
        event(#""status":"delivered","proof_photo_url":"https://x/p.jpg""#),
        event(#""status":"delivered","proof_photo_url":null"#),
        event(#""status":"cancelled","refund_cents":0"#),
        // failures must match too
        event(#""status":"delivered","proof_photo_url":"http://not-https""#),
        event(#""status":"shipped","order_number":[1]"#),
    ]

    @Test(
        "each event takes the first variant whose conditions hold",
        arguments: zip(events.prefix(5), ["shipped", "out_for_delivery", "delivered_with_photo", "delivered", "refunded"]))
    func chosen(json: String, name: String) throws {
        let set = try load(Self.mappings)
        let rendered = try set.render(EventRecord(value: Array(json.utf8)), now: renderNow).get()
        #expect(rendered.variant?.name == name)
    }

    @Test("a variant's keys replace the base's; android and data merge member by member")
    func merged() throws {
        let set = try load(Self.mappings)
        let shipped = try #require(try bodies(set, Self.events[0]).first)
        #expect(shipped.contains(#""ttl":"172800s""#) && shipped.contains(#""channel_id":"orders""#))
        #expect(shipped.contains(#""data":{"order_id":"o-7","screen":"order_detail"}"#))
        let nearby = try #require(try bodies(set, Self.events[1]).first)
        #expect(nearby.contains(#""channel_id":"urgent""#) && nearby.contains(##""color":"#112233""##), "android merged, the variant's channel wins")
        #expect(nearby.contains(#""data":{"order_id":"o-7","screen":"tracking"}"#), "data merged, the variant's screen wins")
        #expect(nearby.contains(#""priority":"HIGH""#) && !nearby.contains("ttl"))
        let refund = try #require(try bodies(set, Self.events[4]).first)
        #expect(refund.hasSuffix(#""topic":"refunds"}}"#), "a variant's own target")
    }

    @Test("no variant: skipped as `unmatched` says, with the event's type and ID")
    func unmatched() throws {
        let set = try load(Self.mappings)
        #expect(
            failure(set, Self.event(#""status":"lost""#))
                == .noVariant(NoVariant(eventType: "order.status_changed", eventID: "events/0/0", action: .skip)))
    }

    @Test("template and tree agree for every variant, byte for byte and failure for failure", arguments: events)
    func agree(json: String) throws {
        let set = try load(Self.mappings)
        let event = try set.eventFormat.decode(EventRecord(value: Array(json.utf8))).get()
        let mapping = try #require(try set.variants(of: event.type)?.choose(event))
        let template = try #require(mapping.template)
        let viaTemplate = Result { () throws(MappingFailure) in try template.render(event, now: renderNow) }
        let viaTree = Result { () throws(MappingFailure) in try mapping.renderTree(event, now: renderNow) }
        switch (viaTemplate, viaTree) {
        case (.success(let a), .success(let b)): #expect(a.map(\.encoded) == b.map(\.encoded))
        case (.failure(let a), .failure(let b)): #expect(a == b)
        default: Issue.record("template \(viaTemplate) vs tree \(viaTree)")
        }
    }

    @Test("the fields only conditions read are decoded: a set decodes sparsely")
    func conditionFieldsDecoded() throws {
        let set = try load(Self.mappings)
        let json = Self.event(#""status":"cancelled","refund_cents":0,"unread":{"big":[1,2,3]}"#)
        let rendered = try set.render(EventRecord(value: Array(json.utf8)), now: renderNow).get()
        #expect(rendered.variant?.name == "refunded" && rendered.event.data["unread"] == nil)
    }

    @Test("an error in a variant points at its line and names it; one in the base is reported once")
    func errorsCarryFileLine() {
        let e = loadErrors(
            """
            version: 1
            events:
              e:
                target: {token: t}
                priority: urgent
                variants:
                  - name: a
                    when: {field: /s, equals: a}
                    body: {key: k}
                  - name: b
                    when: {field: /s, equals: b}
                    body: {key: k}
                    ttl: forever
                    android: {colour: red}
                unmatched: skip
            """)
        #expect(
            e.map { "\($0.line):\($0.column): \($0.message)" } == [
                "5:15: priority must be `high` or `normal`",
                "13:14: ttl \"forever\" is not a duration (variant \"b\")",
                "14:19: unknown field `colour` in `android` (variant \"b\")",
            ])
    }

    @Test("a merged variant must be a mapping on its own: one without a body says which")
    func incompleteVariant() {
        let e = loadErrors(
            """
            version: 1
            events:
              e:
                target: {token: t}
                variants:
                  - name: a
                    when: {field: /s, equals: a}
                    body: {key: k}
                  - name: b
                    when: {field: /s, equals: b}
                unmatched: skip
            """)
        #expect(e.map { "\($0.line): \($0.message)" } == ["9: event \"e\" has neither `title` nor `body` (variant \"b\")"])
    }

    @Test("every variant's keys are linted, each at its own line; variants are listed per event type")
    func everyVariant() throws {
        let set = try load(Self.mappings)
        #expect(set.mappings(of: "order.status_changed").map(\.line) == [9, 14, 20, 24, 27])
        #expect(set.allMappings.count == 5)
        #expect(
            set.variants(of: "order.status_changed")?.summary
                == #"order.status_changed: variants shipped (/status = "shipped"), out_for_delivery (/status in ["out_for_delivery", "nearby"]), delivered_with_photo (/status = "delivered" and /proof_photo_url present), delivered (/status = "delivered"), refunded (/refund_cents = "0"); else skipped"#
        )
    }

    @Test("a variant's own max_age and too_old, project and user target apply to the events it takes")
    func ownEventLevelKeys() throws {
        let set = try load(
            """
            version: 1
            events:
              e:
                target: {token: t}
                body: {key: k}
                max_age: 1h
                occurred_at: {field: /at}
                collapse_key: {from: event_id}
                variants:
                  - name: urgent
                    when: {field: /kind, equals: urgent}
                    max_age: 5m
                    too_old: dead-letter
                    project: driver
                  - name: user
                    when: {field: /kind, equals: user}
                    target: {user: {field: /user}, app: driver}
                  - default: true
            """)
        #expect(set.warnings.count == 1, "the base's collapse key warned once, not once per variant: \(set.warnings)")
        #expect(set.targetsUsers, "a variant targets a user: the worker needs the registry")
        #expect(set.projectChoices.map { "\($0.line) \($0.name ?? "-") \($0.targetsUser)" } == ["10 driver false", "15 - true", "18 - false"])
        let now: Int64 = 1_800_000_000
        func render(_ kind: String, ageSeconds: Int64) -> Result<MappingSet.Rendered, MappingFailure> {
            let json = #"{"type":"e","kind":"\#(kind)","user":"u1","at":\#((now - ageSeconds) * 1000)}"#
            return set.render(EventRecord(value: Array(json.utf8)), now: now) { _ in [UserDevice(kind: .token, id: "d1", app: "driver")] }
        }
        guard case .failure(.tooOld(let old)) = render("urgent", ageSeconds: 600) else {
            Issue.record("10 minutes is over the urgent variant's 5m")
            return
        }
        #expect(old.maxAgeSeconds == 300 && old.action == .deadLetter)
        #expect(try render("urgent", ageSeconds: 60).get().project == "driver")
        #expect(try render("other", ageSeconds: 600).get().variant?.isDefault == true, "the default keeps the base's 1h")
        let user = try render("user", ageSeconds: 0).get()
        #expect(user.user == "u1" && user.messages.map(\.target.value) == ["d1"])
    }

    @Test("a default that is not last is reported as such, not as a missing `unmatched`")
    func defaultNotLast() {
        let e = loadErrors(
            """
            version: 1
            events:
              e:
                target: {token: t}
                body: {key: k}
                variants:
                  - default: true
                  - when: {field: /s, equals: a}
            """)
        #expect(e.map(\.message) == ["variant \"#2\" comes after the default variant \"#1\" (line 7), which takes every event (event \"e\")"])
    }
}
