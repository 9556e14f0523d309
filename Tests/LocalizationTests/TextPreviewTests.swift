import Localization
import Mapping
import MappingLocalization
import Testing

/// `preview` and `lint` with plain texts, fallbacks, subtitles and per-platform texts
/// (docs/mapping.md, *Texts*): what each platform shows, and which keys lint checks.
@Suite("preview and lint of texts, subtitles and per-platform texts")
struct TextPreviewTests {
    static func rows(_ yaml: String, _ event: String = #"{"type":"e","id":"1","n":"Ana"}"#, locales: [String] = ["en"]) throws -> [PreviewRow] {
        let set = try MappingSet.load(files: [("m.yaml", yaml)])
        let rendered = try set.render(EventRecord(value: Array(event.utf8))).get()
        let pushes = LocKeyUses.pushes(try #require(rendered.messages.first).json)
        return Previewer.preview(pushes, locales: locales, catalogs: exampleCatalogs())
    }

    static func outcome(_ rows: [PreviewRow], _ platform: DevicePlatform, _ field: KeyUse.Field) -> PreviewRow.Outcome? {
        rows.first { $0.platform == platform && $0.field == field }?.outcome
    }

    @Test("a plain text is shown as it is on both platforms")
    func plainText() throws {
        let rows = try Self.rows("version: 1\nevents:\n  e:\n    target: {fid: f}\n    title: Shipped\n    body: {field: /n}\n")
        for platform in DevicePlatform.allCases {
            #expect(Self.outcome(rows, platform, .title) == .text("Shipped"))
            #expect(Self.outcome(rows, platform, .body) == .text("Ana"))
        }
        #expect(rows.allSatisfy { $0.key == "(text)" })
    }

    @Test("a fallback: Android shows the key's string (it is never sent the text); iOS too, and the fallback when the app lacks the key")
    func fallback() throws {
        let known = try Self.rows(
            "version: 1\nevents:\n  e:\n    target: {fid: f}\n    body: {key: welcome_title, args: [{field: /n}], fallback: Hello}\n")
        #expect(Self.outcome(known, .android, .body) == .text("Welcome, Ana!"))
        #expect(Self.outcome(known, .ios, .body) == .text("Welcome, Ana!"))
        let unknown = try Self.rows("version: 1\nevents:\n  e:\n    target: {fid: f}\n    body: {key: no_such_key, fallback: Hello}\n")
        #expect(Self.outcome(unknown, .ios, .body) == .text("Hello"))
        #expect(Self.outcome(unknown, .android, .body) == .failure("no string resource no_such_key: FCM shows the plain body (not sent: no text)"))
    }

    @Test("a message that sends Android a text beside a key previews the text: Android's SDK never looks the key up")
    func androidTextBesideKey() {
        let push = LocalizedPush(platform: .android, title: nil, body: LocalizedPush.Text(key: "welcome_title", args: ["Ana"], text: "Hi"))
        let rows = Previewer.preview([push], locales: ["en"], catalogs: exampleCatalogs())
        #expect(rows.first?.outcome == .text("Hi"))
        #expect(rows.first?.note == "the text sent beside the key wins on Android: the key is never looked up")
    }

    @Test("an iOS subtitle key is previewed and linted on iOS only; a platform's own text replaces the shared one there")
    func subtitleAndOverrides() throws {
        let yaml = """
            version: 1
            events:
              e:
                target: {fid: f}
                title: {key: welcome_title, args: [{field: /n}]}
                subtitle: {key: order_shipped_title}
                body: {key: new_message_body, args: ["2", {field: /n}]}
                android: {body: {key: order_shipped_body, args: ["1042", DHL]}}
                apns: {title: Hello}
            """
        let rows = try Self.rows(yaml)
        #expect(Self.outcome(rows, .ios, .subtitle) == .text("Your order has shipped"))
        #expect(Self.outcome(rows, .android, .subtitle) == nil)
        #expect(Self.outcome(rows, .ios, .title) == .text("Hello"))
        #expect(Self.outcome(rows, .android, .body) == .text("Order #1042 is on its way with DHL."))
        let uses = LocKeyUses.uses(try MappingSet.load(files: [("m.yaml", yaml)]))
        #expect(
            uses.map { "\($0.platform.rawValue) \($0.field.rawValue) \($0.key)" } == [
                "android title welcome_title", "ios subtitle ORDER_SHIPPED_TITLE", "android body order_shipped_body", "ios body NEW_MESSAGE_BODY",
            ])
    }
}
