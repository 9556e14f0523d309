import Testing

@testable import Mapping

/// The `android` and `apns` blocks: a platform's own value replaces the shared one there only,
/// and FCM's typed fields are written as FCM reads them (docs/mapping.md, *Per-platform options*).
@Suite("Per-platform options")
struct PlatformTests {
    static func mapping(_ extra: String, body: String = "{key: k}") -> String {
        "version: 1\nevents:\n  e:\n    target: {fid: f}\n    body: \(body)\n" + extra
    }

    static func message(_ yaml: String, _ json: String = #"{"type":"e","id":"1"}"#) throws -> JSONValue? {
        try JSONParser.parse(try #require(try bodies(try load(yaml), json).first))["message"]
    }

    @Test("priority, ttl and the collapse key can differ per platform; what a block leaves out stays shared")
    func perPlatformDelivery() throws {
        let m = try Self.message(
            Self.mapping(
                """
                    priority: normal
                    ttl: 1h
                    collapse_key: chat-1
                    android: {priority: high}
                    apns: {priority: low, ttl: 10m, collapse_id: thread-9}

                """))
        #expect(m?["android"]?["priority"] == .string("HIGH"))
        #expect(m?["android"]?["ttl"] == .string("3600s"))
        #expect(m?["android"]?["collapse_key"] == .string("chat-1"))
        let headers = m?["apns"]?["headers"]
        #expect(headers?["apns-priority"] == .string("1"))
        #expect(headers?["apns-expiration"] == .string(String(renderNow + 600)))
        #expect(headers?["apns-collapse-id"] == .string("thread-9"))
        // Without a block, both platforms share the values, as before.
        let shared = try Self.message(Self.mapping("    priority: high\n    ttl: 1h\n"))
        #expect(shared?["android"]?["priority"] == .string("HIGH"))
        #expect(shared?["apns"]?["headers"]?["apns-priority"] == .string("10"))
        #expect(shared?["apns"]?["headers"]?["apns-expiration"] == .string(String(renderNow + 3600)))
    }

    @Test("a badge is iOS's badge and Android's notification count, each overridable; a negative count from the event is invalid_value")
    func badge() throws {
        let m = try Self.message(Self.mapping("    badge: {field: /n}\n"), #"{"type":"e","id":"1","n":3}"#)
        #expect(m?["apns"]?["payload"]?["aps"]?["badge"] == .int(3))
        #expect(m?["android"]?["notification"]?["notification_count"] == .int(3))
        let own = try Self.message(Self.mapping("    badge: 3\n    android: {notification_count: 0}\n"))
        #expect(own?["android"]?["notification"]?["notification_count"] == .int(0))
        #expect(own?["apns"]?["payload"]?["aps"]?["badge"] == .int(3))
        let set = try load(Self.mapping("    badge: {field: /n}\n"))
        #expect(failure(set, #"{"type":"e","id":"1","n":-1}"#) == .invalidValue(field: "/n", reason: "badge -1 is below 0"))
        #expect(failure(set, #"{"type":"e","id":"1","n":"lots"}"#) == .wrongType(field: "/n", expected: "integer", found: #""lots""#))
    }

    @Test("Android's own notification fields, written as FCM types them")
    func androidFields() throws {
        let m = try Self.message(
            Self.mapping(
                """
                    data: {order: "7", screen: list}
                    android:
                      visibility: private
                      event_time: {field: /at, unit: s}
                      sticky: true
                      local_only: false
                      direct_boot_ok: true
                      ticker: {field: /who}
                      notification_priority: high
                      restricted_package_name: com.example.shop
                      data: {screen: detail}
                      analytics_label: android_orders

                """), #"{"type":"e","id":"1","at":1800000000,"who":"Ana"}"#)
        let a = m?["android"]
        let n = a?["notification"]
        #expect(n?["visibility"] == .string("PRIVATE"))
        #expect(n?["event_time"] == .string("2027-01-15T08:00:00.000Z"))
        #expect(n?["sticky"] == .bool(true))
        #expect(n?["local_only"] == .bool(false))
        #expect(n?["ticker"] == .string("Ana"))
        #expect(n?["notification_priority"] == .string("PRIORITY_HIGH"))
        #expect(a?["direct_boot_ok"] == .bool(true))
        #expect(a?["restricted_package_name"] == .string("com.example.shop"))
        #expect(a?["fcm_options"]?["analytics_label"] == .string("android_orders"))
        // FCM's android.data replaces data on Android, so it carries both, the block's key winning.
        #expect(a?["data"] == .object([("order", .string("7")), ("screen", .string("detail"))]))
        #expect(m?["data"] == .object([("order", .string("7")), ("screen", .string("list"))]))
    }

    @Test("event_time reads RFC 3339 with any offset, epoch milliseconds, and times before 1970; anything else is invalid_value")
    func eventTime() throws {
        let yaml = Self.mapping("    android: {event_time: {field: /at}}\n")
        for (at, expected) in [
            (#""2027-01-15T09:00:00+01:00""#, "2027-01-15T08:00:00.000Z"), ("1800000000123", "2027-01-15T08:00:00.123Z"),
            ("-1500", "1969-12-31T23:59:58.500Z"),
        ] {
            let m = try Self.message(yaml, #"{"type":"e","id":"1","at":\#(at)}"#)
            #expect(m?["android"]?["notification"]?["event_time"] == .string(expected), "\(at)")
        }
        let set = try load(yaml)
        #expect(failure(set, #"{"type":"e","id":"1","at":"soon"}"#)?.code == "invalid_value")
        #expect(failure(set, #"{"type":"e","id":"1"}"#)?.code == "invalid_value")
    }

    @Test("iOS's own texts, subtitle, critical sound, target content and filter criteria")
    func apnsFields() throws {
        let m = try Self.message(
            Self.mapping(
                """
                    title: {key: t}
                    apns:
                      title: "Order shipped"
                      subtitle: {key: order_subtitle, args: [{field: /n}]}
                      sound: {critical: true, name: alarm.caf, volume: 0.5}
                      target_content_id: {field: /n}
                      filter_criteria: work
                      image: https://cdn.example.com/a.png
                      analytics_label: ios_orders

                """), #"{"type":"e","id":"1","n":"42"}"#)
        let aps = m?["apns"]?["payload"]?["aps"]
        #expect(aps?["alert"]?["title"] == .string("Order shipped") && aps?["alert"]?["title-loc-key"] == nil)
        #expect(aps?["alert"]?["subtitle-loc-key"] == .string("ORDER_SUBTITLE"))
        #expect(aps?["alert"]?["subtitle-loc-args"] == .array([.string("42")]))
        #expect(aps?["sound"] == .object([("critical", .int(1)), ("name", .string("alarm.caf")), ("volume", .double(0.5))]))
        #expect(aps?["target-content-id"] == .string("42") && aps?["filter-criteria"] == .string("work"))
        #expect(aps?["mutable-content"] == .int(1))
        #expect(
            m?["apns"]?["fcm_options"] == .object([("analytics_label", .string("ios_orders")), ("image", .string("https://cdn.example.com/a.png"))]))
        // Android keeps the shared title's key, and gets no image.
        #expect(m?["android"]?["notification"]?["title_loc_key"] == .string("t"))
        #expect(m?["android"]?["notification"]?["image"] == nil)
    }

    @Test(
        "mistakes in the blocks are load errors at their line",
        arguments: [
            ("    android: {visibility: hidden}\n", "android.visibility must be one of private, public, secret"),
            ("    android: {notification_priority: urgent}\n", "android.notification_priority must be one of min, low, default, high, max"),
            ("    android: {event_time: \"2027-01-01T00:00:00Z\"}\n", "`android.event_time` must be `{field: /pointer}`"),
            ("    android: {notification_count: -1}\n", "android.notification_count must be an integer of at least 0, or `{field: /pointer}` to one"),
            ("    android: {data: {from: x}}\n", "data key \"from\" is reserved by FCM"),
            ("    apns: {priority: urgent}\n", "apns.priority must be one of high, normal, low"),
            ("    apns: {sound: {name: a.caf}}\n", "apns.sound as a map is a critical alert's sound: it needs `critical: true`"),
            (
                "    apns: {collapse_id: \"\(String(repeating: "x", count: 65))\"}\n",
                "apns.collapse_id is 65 bytes; it becomes apns-collapse-id, which allows 64"
            ),
            ("    apns: {image: http://a.example/x.png}\n", "apns.image \"http://a.example/x.png\" is not an https:// URL"),
            ("    android: {ttl: remaining}\n", "`android.ttl: remaining` is what is left of `max_age`, and there is none"),
            ("    badge: many\n", "badge must be an integer of at least 0, or `{field: /pointer}` to one"),
        ])
    func mistakes(yaml: String, message: String) {
        let errors = loadErrors(Self.mapping(yaml))
        #expect(errors.map(\.message) == [message], "\(errors)")
        #expect(errors.first?.line == 6)
    }

    @Test("a block for a platform the push does not go to loads with a warning: it is never sent")
    func blockForAnotherPlatform() throws {
        let set = try load(Self.mapping("    platforms: [ios]\n    android: {channel_id: c}\n"))
        #expect(set.warnings.map(\.message) == ["`android` is not sent: this push does not go to android"])
        #expect(set.warnings.first?.line == 7)
    }
}
