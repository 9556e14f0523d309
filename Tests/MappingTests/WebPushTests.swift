import Testing

@testable import Mapping

/// Web push: `platforms: [web]` and the `web` block (docs/mapping.md, *Web push*). Web has no
/// localization keys, so a web push shows plain text: a text, or a key's fallback.
@Suite("Web push")
struct WebPushTests {
    static let article = """
        version: 1
        events:
          article.published:
            target: {topic: {field: /section}}
            platforms: [web]
            title: {field: /headline}
            body: {field: /standfirst}
            image: {field: /hero}
            ttl: 6h
            replace_id: {field: /article_id}
            data: {article_id: {field: /article_id}}
            web:
              link: {field: /url}
              icon: "https://news.example.com/icons/192.png"
              urgency: low
              topic: {field: /article_id}
              require_interaction: false
        """

    static let event =
        #"{"type":"article.published","section":"world","headline":"Talks resume","standfirst":"Negotiators meet.","hero":"https://news.example.com/i/991.jpg","article_id":"a-991","url":"https://news.example.com/a/991"}"#

    @Test("a web push carries RFC 8030's headers, the Notifications API's options and the link a click opens, and nothing for Android or iOS")
    func article() throws {
        let body = try #require(try bodies(try load(Self.article), Self.event).first)
        #expect(
            body
                == #"{"message":{"data":{"article_id":"a-991"},"topic":"world","webpush":{"fcm_options":{"link":"https://news.example.com/a/991"},"headers":{"TTL":"21600","Topic":"a-991","Urgency":"low"},"notification":{"body":"Negotiators meet.","icon":"https://news.example.com/icons/192.png","image":"https://news.example.com/i/991.jpg","requireInteraction":false,"tag":"a-991","title":"Talks resume"}}}}"#
        )
    }

    @Test("beside a key, web shows the fallback; priority and ttl: remaining become Urgency and TTL")
    func fallbackAndDerivedHeaders() throws {
        let set = try load(
            """
            version: 1
            events:
              e:
                target: {fid: f}
                platforms: [android, ios, web]
                title: {key: order_paid_title, fallback: "Order paid"}
                body: {key: order_paid_body, args: [{field: /n}], fallback: {field: /summary}}
                priority: high
                max_age: 10m
                ttl: remaining
            """)
        let now = renderNow * 1000
        let m = try JSONParser.parse(
            try #require(
                try set.render(
                    EventRecord(value: Array(#"{"type":"e","id":"1","n":"7","summary":"Paid: 7"}"#.utf8), timestamp: now - 60_000), now: renderNow
                )
                .get().messages.first
            ).requestBody())["message"]
        #expect(m?["webpush"]?["notification"]?["title"] == .string("Order paid"))
        #expect(m?["webpush"]?["notification"]?["body"] == .string("Paid: 7"))
        #expect(m?["webpush"]?["headers"] == .object([("TTL", .string("540")), ("Urgency", .string("high"))]))
        // Android still gets only the keys; iOS the keys and the fallback.
        #expect(m?["android"]?["notification"]?["title"] == nil)
        #expect(m?["apns"]?["payload"]?["aps"]?["alert"]?["title"] == .string("Order paid"))
    }

    @Test("an event's link that is not https, or a Topic RFC 8030 refuses, fails the event as invalid_value")
    func perEventChecks() throws {
        let set = try load(Self.article)
        #expect(
            failure(set, Self.event.replacingOccurrences(of: "https://news.example.com/a/991", with: "http://news.example.com/a/991"))
                == .invalidValue(field: "/url", reason: #""http://news.example.com/a/991" is not an https:// URL"#))
        #expect(failure(set, Self.event.replacingOccurrences(of: #""a-991""#, with: #""a 991""#))?.code == "invalid_value")
    }

    @Test(
        "mistakes are load errors at their line",
        arguments: [
            ("    body: {key: k}\n", "web push has no localization keys, so `body` shows nothing on the web"),
            ("    body: x\n    web: {title: {key: t}}\n", "web.title cannot be a localization key: web push has none"),
            ("    body: x\n    web: {link: http://a.example/}\n", "web.link \"http://a.example/\" is not an https:// URL"),
            (
                "    body: x\n    web: {topic: \"\(String(repeating: "a", count: 33))\"}\n",
                "web.topic: \"\(String(repeating: "a", count: 33))\" is not 1 to 32 characters (RFC 8030 §5.4)"
            ),
            ("    body: x\n    web: {urgency: asap}\n", "web.urgency must be one of very-low, low, normal, high"),
            ("    body: x\n    web: {dir: up}\n", "web.dir must be one of auto, ltr, rtl"),
            ("    body: x\n    replace_id: r\n    web: {tag: t}\n", "`replace_id` and `web.tag` both set the web notification's tag"),
        ])
    func mistakes(yaml: String, message: String) {
        let errors = loadErrors("version: 1\nevents:\n  e:\n    target: {fid: f}\n    platforms: [web]\n" + yaml)
        #expect(errors.map(\.message) == [message], "\(errors)")
    }
}
