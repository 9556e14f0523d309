import Foundation
import Testing

@testable import Mapping

/// Titles, subtitles and bodies as plain text, as a localization key, or a key with a plain-text
/// fallback, and what each platform is sent (docs/mapping.md, *Texts*).
@Suite("Texts: plain, localized, and a key with a fallback")
struct TextTests {
    static func mapping(_ texts: String, platforms: String = "") -> String {
        "version: 1\nevents:\n  e:\n    target: {token: t}\n\(platforms)" + texts
    }

    static let event = #"{"type":"e","id":"e-1","headline":"Order 42 shipped","who":"Ana"}"#

    /// The rendered message's Android notification and APNs alert.
    static func parts(_ yaml: String, _ json: String = event) throws -> (android: [String: JSONValue], alert: [String: JSONValue]) {
        let set = try load(yaml)
        let message = try #require(try JSONParser.parse(try #require(try bodies(set, json).first)))["message"]
        return (members(message?["android"]?["notification"]), members(message?["apns"]?["payload"]?["aps"]?["alert"]))
    }

    /// An object's members by name (the parser keeps them sorted, the renderer in FCM's order).
    static func members(_ value: JSONValue?) -> [String: JSONValue] {
        guard case .object(let m)? = value else { return [:] }
        return Dictionary(m.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    @Test("a plain text, literal or from the event, goes to both platforms as title and body")
    func plain() throws {
        let (android, alert) = try Self.parts(Self.mapping("    title: Your order has shipped\n    body: {field: /headline}\n"))
        #expect(android == ["title": .string("Your order has shipped"), "body": .string("Order 42 shipped")])
        #expect(alert == ["title": .string("Your order has shipped"), "body": .string("Order 42 shipped")])
        let spelled = try Self.parts(Self.mapping("    title: {text: {field: /missing, default: News}}\n    body: {value: \"yes: it is\"}\n"))
        #expect(spelled.android["title"] == .string("News") && spelled.alert["body"] == .string("yes: it is"))
    }

    @Test("a key with a fallback: Android gets the key only, iOS the key and the text it shows when the app lacks the key")
    func fallback() throws {
        let (android, alert) = try Self.parts(
            Self.mapping(
                "    title: {key: shipped_title, fallback: Your order has shipped}\n    body: {key: shipped_body, args: [{field: /who}], fallback: {field: /headline}}\n"
            ))
        #expect(
            android == [
                "title_loc_key": .string("shipped_title"), "body_loc_key": .string("shipped_body"), "body_loc_args": .array([.string("Ana")]),
            ])
        #expect(
            alert == [
                "title-loc-key": .string("SHIPPED_TITLE"), "title": .string("Your order has shipped"), "loc-key": .string("SHIPPED_BODY"),
                "loc-args": .array([.string("Ana")]), "body": .string("Order 42 shipped"),
            ])
    }

    @Test("a subtitle goes to iOS only, as a key or a text; without iOS among the platforms it is a warning")
    func subtitle() throws {
        let (android, alert) = try Self.parts(
            Self.mapping("    title: {key: t}\n    subtitle: {key: sub, args: [{field: /who}], fallback: From Ana}\n    body: Hi\n"))
        #expect(android == ["title_loc_key": .string("t"), "body": .string("Hi")])
        #expect(
            alert == [
                "title-loc-key": .string("T"), "subtitle-loc-key": .string("SUB"), "subtitle-loc-args": .array([.string("Ana")]),
                "subtitle": .string("From Ana"), "body": .string("Hi"),
            ])
        let androidOnly = try load(Self.mapping("    body: Hi\n    subtitle: S\n", platforms: "    platforms: [android]\n"))
        #expect(androidOnly.warnings.map(\.message) == ["`subtitle` shows only on iOS, and this push does not go to iOS"])
        #expect(androidOnly.warnings.first?.line == 7)
    }

    @Test(
        "mistakes are load errors at their line",
        arguments: [
            ("    body: {text: Hi, key: k}\n", "`body` has both `text` and a localization key", 5),
            ("    body: {fallback: Hi}\n", "`body` has a `fallback` but no `key`", 5),
            ("    body: {args: [{field: /who}]}\n", "`body` has no localization key but has args", 5),
            ("    body: {text: Hi, colour: red}\n", "unknown field `colour` in `body`", 5),
            ("    silent: true\n    subtitle: S\n", "a silent push has no title, subtitle or body", 5),
        ])
    func mistakes(yaml: String, message: String, line: Int) {
        let errors = loadErrors(Self.mapping(yaml))
        #expect(errors.map(\.message) == [message], "\(errors)")
        #expect(errors.first?.line == line)
    }

    @Test("texts take the template path like keys, and it renders what the tree renders")
    func templates() throws {
        let set = try load(
            Self.mapping("    title: {key: t, fallback: {field: /headline}}\n    subtitle: {field: /who}\n    body: {text: {field: /headline}}\n"))
        let mapping = try #require(set.mappings["e"])
        let template = try #require(mapping.template)
        let event = try set.eventFormat.decode(EventRecord(value: Array(Self.event.utf8))).get()
        #expect(try template.render(event, now: renderNow).map(\.encoded) == mapping.renderTree(event, now: renderNow).map(\.encoded))
    }
}
