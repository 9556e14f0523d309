import Synchronization
import Testing

@testable import Mapping

/// Live Activity mappings (docs/mapping.md, *Live Activities*): `activity:` renders one APNs
/// message with Apple's token in `apns.live_activity_token` and ActivityKit's keys in `aps`.
@Suite("Live Activity mappings")
struct ActivityMappingTests {
    static let lifecycle = """
        version: 1
        events:
          order.created:
            target: {token: {field: /device_token}}
            activity:
              key: {field: /order_id}
              event: start
              token: {field: /start_token}
              attributes_type: DeliveryAttributes
              attributes:
                order_id: {field: /order_id}
              content_state:
                status: confirmed
                progress: 0
              stale_date: {after: 45m}
              relevance: 75
              alert:
                title: {key: order_confirmed_title, args: [{field: /restaurant}]}
                body: "We are on it"
                sound: default
            occurred_at: {field: /occurred_at}
          order.progress:
            target: {token: {field: /device_token}}
            activity:
              key: {field: /order_id}
              event: {field: /status, map: {picked_up: update, nearby: update, delivered: end, preparing: skip}}
              token: {field: /activity_token}
              content_state:
                status: {field: /status}
                courier: {field: /courier, optional: true}
                eta: {field: /eta, as: apple_date}
                progress: {field: /progress, as: number}
                stops: {field: /stops, as: int, default: 0}
                late: off
              dismissal_date: {after: 30m}
            occurred_at: {field: /occurred_at}
            max_age: 10m
            ttl: remaining
        """

    static let now: Int64 = 1_800_000_000  // 2027-01-15T08:00:00Z

    func render(_ yaml: String, _ json: String, timestamp: Int64? = nil) throws -> Result<MappingSet.Rendered, MappingFailure> {
        try load(yaml).render(EventRecord(value: Array(json.utf8), timestamp: timestamp), now: Self.now)
    }

    func body(_ yaml: String, _ json: String, timestamp: Int64? = nil) throws -> String {
        let rendered = try render(yaml, json, timestamp: timestamp).get()
        #expect(rendered.messages.count == 1)
        return String(decoding: try #require(rendered.messages.first).encoded, as: UTF8.self)
    }

    @Test("a start carries attributes, an alert with a localized title, input-push-token, and priority 10")
    func start() throws {
        let event =
            #"{"type":"order.created","order_id":"o-42","device_token":"fcm-A","start_token":"p2s-A","restaurant":"Luigi's","occurred_at":"2027-01-15T07:59:30Z"}"#
        #expect(
            try body(Self.lifecycle, event)
                == #"{"apns":{"headers":{"apns-priority":"10","apns-push-type":"liveactivity"},"live_activity_token":"p2s-A","payload":{"aps":{"alert":{"body":"We are on it","sound":"default","title":{"loc-args":["Luigi's"],"loc-key":"ORDER_CONFIRMED_TITLE"}},"attributes":{"order_id":"o-42"},"attributes-type":"DeliveryAttributes","content-state":{"progress":0,"status":"confirmed"},"event":"start","input-push-token":1,"relevance-score":75,"stale-date":1800002670,"timestamp":1799999970}}},"token":"fcm-A"}"#
        )
    }

    @Test("an update keeps JSON types, converts with `as`, leaves an absent optional out, and is sent at priority 5 without an alert")
    func update() throws {
        let event =
            #"{"type":"order.progress","order_id":"o-42","device_token":"fcm-A","activity_token":"la-1","status":"picked_up","eta":"2027-01-15T08:20:00Z","progress":"0.5","occurred_at":"2027-01-15T07:59:59.900Z"}"#
        let json = try body(Self.lifecycle, event)
        #expect(
            json
                == #"{"apns":{"headers":{"apns-expiration":"1800000599","apns-priority":"5","apns-push-type":"liveactivity"},"live_activity_token":"la-1","payload":{"aps":{"content-state":{"eta":821694000,"late":"off","progress":0.5,"status":"picked_up","stops":0},"event":"update","timestamp":1799999999}}},"token":"fcm-A"}"#
        )
        let rendered = try render(Self.lifecycle, event).get()
        #expect(rendered.messages.first?.liveActivity == LiveActivityInfo(key: "o-42", event: .update, token: "la-1", timestamp: 1_799_999_999))
    }

    @Test("an end from the mapped field carries the dismissal date; `skip` skips; a value not in the map fails")
    func endSkipAndUnknown() throws {
        let base =
            #""type":"order.progress","order_id":"o-42","device_token":"fcm-A","activity_token":"la-1","eta":1800001200000,"progress":1,"courier":"Ana","occurred_at":"2027-01-15T07:59:00Z""#
        let end = try body(Self.lifecycle, "{" + base + #","status":"delivered"}"#)
        #expect(end.contains(#""dismissal-date":1800001740"#))
        #expect(end.contains(#""event":"end""#))
        #expect(end.contains(#""courier":"Ana""#))
        #expect(end.contains(#""apns-priority":"10""#))  // an end is shown at once
        guard case .failure(let skipped) = try render(Self.lifecycle, "{" + base + #","status":"preparing"}"#) else {
            Issue.record("expected a skip")
            return
        }
        #expect(skipped == .activitySkipped(field: "/status", value: "preparing"))
        guard case .failure(.invalidValue(let field, _)) = try render(Self.lifecycle, "{" + base + #","status":"lost"}"#) else {
            Issue.record("expected invalid_value")
            return
        }
        #expect(field == "/status")
    }

    @Test("a value that cannot be converted fails the event with the field named")
    func conversionFailures() throws {
        let base =
            #""type":"order.progress","order_id":"o-42","device_token":"fcm-A","activity_token":"la-1","status":"nearby","occurred_at":"2027-01-15T07:59:00Z""#
        let badNumber = try render(Self.lifecycle, "{" + base + #","eta":"2027-01-15T08:20:00Z","progress":"half"}"#)
        #expect(badNumber.failureCode == "invalid_value")
        let badDate = try render(Self.lifecycle, "{" + base + #","eta":"soon","progress":1}"#)
        #expect(badDate.failureCode == "invalid_value")
        let missing = try render(Self.lifecycle, "{" + base + #","progress":1}"#)
        guard case .failure(.missingField(let field, let role)) = missing else {
            Issue.record("expected missing_field, got \(missing)")
            return
        }
        #expect(field == "/eta" && role == "activity.content_state.eta")
        let badInt = try render(Self.lifecycle, "{" + base + #","eta":1,"progress":1,"stops":2.5}"#)
        #expect(badInt.failureCode == "invalid_value")
    }

    @Test("the timestamp is the Kafka record's time without occurred_at; a time an hour ahead fails invalid_event_time")
    func timestamps() throws {
        let yaml = """
            version: 1
            events:
              score:
                target: {token: t}
                activity: {key: m-1, event: update, token: {field: /la}, content_state: {home: {field: /home}}}
            """
        let json = try body(yaml, #"{"type":"score","la":"la-9","home":2}"#, timestamp: 1_799_999_000_123)
        #expect(json.contains(#""timestamp":1799999000"#))
        #expect(json.contains(#""content-state":{"home":2}"#))
        let ahead = try render(yaml, #"{"type":"score","la":"la-9","home":2}"#, timestamp: (Self.now + 3601) * 1000)
        #expect(ahead.failureCode == "invalid_event_time")
        let none = try render(yaml, #"{"type":"score","la":"la-9","home":2}"#)
        #expect(none.failureCode == "invalid_event_time")
    }

    @Test(
        "load errors: a notification's keys, a start without attributes or alert, dismissal_date on an update, a fallback in an alert, a target that is not one device"
    )
    func loadErrors() {
        let errors = MappingTests.loadErrors(
            """
            version: 1
            events:
              a:
                target: {topic: news}
                title: Hi
                activity:
                  key: k
                  event: start
                  token: {field: /t}
                  content_state: {x: 1}
              b:
                target: {token: t}
                activity:
                  key: k
                  event: update
                  token: {field: /t}
                  content_state: {x: 1}
                  dismissal_date: {after: 1h}
                  attributes_type: X
                  alert: {title: {key: k, fallback: K}}
              c:
                target: {token: t}
                activity: {key: k, event: pause, token: t}
            """)
        let messages = errors.map { "\($0.line): \($0.message)" }
        for expected in [
            "5: `title` is a notification's", "4: a Live Activity goes to one device", "a start needs `attributes_type`",
            "a start needs `attributes`",
            "a start needs `alert`", "18: `dismissal_date` applies to an end event only", "19: `attributes_type` applies to a start event only",
            "20: a Live Activity alert's title is a text or a key", "23: activity.event \"pause\" is not start, update, end",
        ] {
            #expect(messages.contains { $0.contains(expected) }, "\(expected) not in \(messages)")
        }
    }

    @Test("typed values: YAML 1.2 scalars, quoted strings, big integers exact, `{value}` as written; `off` warns")
    func typedValues() throws {
        let yaml = """
            version: 1
            events:
              e:
                target: {token: t}
                activity:
                  key: k
                  event: update
                  token: t
                  content_state:
                    a: 12
                    b: "12"
                    c: 1.5
                    d: true
                    e: null
                    f: on
                    g: {value: {field: x}}
                    h: [1, two]
                    i: {field: /big}
                    j: {field: /n, as: string}
                    k: {field: /flag, as: bool}
            """
        let set = try load(yaml)
        #expect(set.warnings.contains { $0.message.contains("the string \"on\", not a boolean") })
        let json = try body(yaml, #"{"type":"e","big":123456789012345678901234567890,"n":11.80,"flag":"true"}"#, timestamp: 1_799_999_000_000)
        #expect(
            json.contains(
                #""content-state":{"a":12,"b":"12","c":1.5,"d":true,"e":null,"f":"on","g":{"field":"x"},"h":[1,"two"],"i":123456789012345678901234567890,"j":"11.8","k":true}"#
            ), "\(json)")
    }

    @Test("push_to_start: one start per user device with a token for the attributes type; wrong combinations are load errors")
    func pushToStart() throws {
        let yaml = """
            version: 1
            events:
              order.created:
                target: {user: {field: /customer}}
                activity:
                  key: {field: /order_id}
                  event: start
                  token: push_to_start
                  attributes_type: DeliveryAttributes
                  attributes: {order_id: {field: /order_id}}
                  content_state: {status: confirmed}
                  alert: {title: Confirmed}
            """
        let devices = [
            UserDevice(kind: .token, id: "iphone", platform: "ios", pushToStart: ["DeliveryAttributes": "p2s-1", "Other": "x"]),
            UserDevice(kind: .fid, id: "ipad", platform: "ios", app: "ipad-app", pushToStart: ["DeliveryAttributes": "p2s-2"]),
            UserDevice(kind: .token, id: "old", platform: "ios"),
        ]
        let set = try load(yaml)
        let record = EventRecord(value: Array(#"{"type":"order.created","order_id":"o-1","customer":"ana"}"#.utf8), timestamp: 1_799_999_000_000)
        let messages = try set.render(record, now: Self.now, devices: { _ in devices }).get().messages
        #expect(messages.map(\.target) == [MessageTarget(.token, "iphone"), MessageTarget(.fid, "ipad")])
        #expect(messages.map { $0.liveActivity?.token } == ["p2s-1", "p2s-2"])
        #expect(messages.map { $0.liveActivity?.pushToStartType } == ["DeliveryAttributes", "DeliveryAttributes"])
        #expect(messages.map(\.project) == [nil, "ipad-app"])
        let none = set.render(record, now: Self.now, devices: { _ in [devices[2]] })
        #expect(none.failureCode == "no_devices")

        let errors = MappingTests.loadErrors(
            """
            version: 1
            events:
              a:
                target: {user: {field: /u}}
                activity: {key: k, event: start, token: {field: /t}, attributes_type: A, attributes: {}, content_state: {}, alert: {title: T}}
              b:
                target: {token: t}
                activity: {key: k, event: start, token: push_to_start, attributes_type: A, attributes: {}, content_state: {}, alert: {title: T}}
              c:
                target: {user: {field: /u}}
                activity: {key: k, event: update, token: push_to_start, content_state: {}}
            """
        ).map { "\($0.line): \($0.message)" }
        for expected in [
            "4: a user's devices have push-to-start tokens only", "7: `token: push_to_start` takes the tokens of a user's devices",
            "11: `token: push_to_start` starts an activity",
        ] {
            #expect(errors.contains { $0.contains(expected) }, "\(expected) not in \(errors)")
        }
    }

    @Test("token: registry: one push to each device the activity's registry entry lists with a token; load errors")
    func registry() throws {
        let yaml = """
            version: 1
            events:
              order.picked_up:
                activity:
                  key: {field: /order_id}
                  event: update
                  token: registry
                  content_state: {status: picked_up}
            """
        let set = try load(yaml)
        #expect(set.targetsUsers, "a worker needs the device registry for it")
        let looked = Mutex<[String]>([])
        let devices: MappingSet.DeviceLookup = { key in
            looked.withLock { $0.append(key) }
            return [
                UserDevice(kind: .fid, id: "phone", platform: "ios", liveActivityToken: "la-phone"),
                UserDevice(kind: .token, id: "watch-less", platform: "ios"),
            ]
        }
        let record = EventRecord(value: Array(#"{"type":"order.picked_up","order_id":"o-9"}"#.utf8), timestamp: 1_799_999_000_000)
        let messages = try set.render(record, now: Self.now, devices: devices).get().messages
        #expect(looked.withLock { $0 } == ["activity:o-9"])
        #expect(messages.map(\.target) == [MessageTarget(.fid, "phone")])
        #expect(messages.first?.liveActivity?.token == "la-phone" && messages.first?.liveActivity?.fromRegistry == true)
        let none = set.render(record, now: Self.now, devices: { _ in [] })
        guard case .failure(.noDevices(let key)) = none else {
            Issue.record("\(none)")
            return
        }
        #expect(key == "activity:o-9")
        let errors = MappingTests.loadErrors(
            """
            version: 1
            events:
              a:
                target: {token: t}
                activity: {key: k, event: update, token: registry, content_state: {}}
              b:
                activity: {key: k, event: start, token: registry, attributes_type: A, attributes: {}, content_state: {}, alert: {title: T}}
            """
        ).map { "\($0.line): \($0.message)" }
        #expect(errors.contains { $0.contains("4: `token: registry` sends to the devices the activity's registry entry lists") }, "\(errors)")
        #expect(errors.contains { $0.contains("7: an activity's registry entry holds its update token") }, "\(errors)")
    }

    @Test("variants choose the event kind: a variant's `activity` merges member by member into the shared one")
    func variants() throws {
        let yaml = """
            version: 1
            events:
              order.progress:
                target: {token: {field: /device_token}}
                activity:
                  key: {field: /order_id}
                  event: update
                  token: {field: /activity_token}
                  content_state: {status: {field: /status}}
                variants:
                  - name: delivered
                    when: {field: /status, equals: delivered}
                    activity:
                      event: end
                      alert: {title: {key: order_delivered_title}}
                  - name: moving
                    default: true
            """
        let set = try load(yaml)
        func rendered(_ status: String) throws -> String {
            let event = #"{"type":"order.progress","order_id":"o-1","status":"\#(status)","device_token":"d","activity_token":"la"}"#
            let messages = try set.render(EventRecord(value: Array(event.utf8), timestamp: 1_799_999_000_000), now: Self.now).get().messages
            return String(decoding: try #require(messages.first).encoded, as: UTF8.self)
        }
        let end = try rendered("delivered")
        #expect(
            end.contains(#""event":"end""#) && end.contains(#""loc-key":"ORDER_DELIVERED_TITLE""#)
                && end.contains(#""content-state":{"status":"delivered"}"#))
        let update = try rendered("nearby")
        #expect(update.contains(#""event":"update""#) && !update.contains("alert"))
    }
}
