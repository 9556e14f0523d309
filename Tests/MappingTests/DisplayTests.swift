import Foundation
import Testing

@testable import Mapping

/// `image`, `interruption` and `relevance`: what each platform is sent, and the mistakes caught
/// at load or per event (docs/mapping.md, *Images, interruption levels and relevance*).
@Suite("Images, interruption levels and relevance")
struct DisplayTests {
    static func mapping(_ extra: String) -> String {
        "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n" + extra
    }

    static func message(_ set: MappingSet, _ json: String = #"{"type":"e","id":"1","img":"https://cdn.example.com/a.png"}"#) throws -> JSONValue? {
        try JSONParser.parse(try #require(try bodies(set, json).first))["message"]
    }

    @Test("an image goes to Android's notification and to APNs' fcm_options, with mutable-content so the app's extension can fetch it")
    func image() throws {
        for source in ["https://cdn.example.com/a.png", "{field: /img}"] {
            let message = try Self.message(try load(Self.mapping("    image: \(source)\n")))
            #expect(message?["android"]?["notification"]?["image"] == .string("https://cdn.example.com/a.png"))
            #expect(message?["apns"]?["fcm_options"]?["image"] == .string("https://cdn.example.com/a.png"))
            #expect(message?["apns"]?["payload"]?["aps"]?["mutable-content"] == .int(1))
        }
        // Without an image, nothing changes: no fcm_options, no mutable-content.
        let plain = try Self.message(try load(Self.mapping("")))
        #expect(plain?["apns"]?["fcm_options"] == nil && plain?["apns"]?["payload"]?["aps"]?["mutable-content"] == nil)
    }

    @Test("an event's image URL that is not https fails the event as invalid_value, the same by template and by tree")
    func eventImageNotHTTPS() throws {
        let set = try load(Self.mapping("    image: {field: /img}\n"))
        let mapping = try #require(set.mappings["e"])
        #expect(mapping.template != nil)
        let event = try set.eventFormat.decode(EventRecord(value: Array(#"{"type":"e","id":"1","img":"http://cdn.example.com/a.png"}"#.utf8))).get()
        let failure = Result { () throws(MappingFailure) in try mapping.renderTree(event, now: renderNow) }
        #expect(failure.map(\.count) == .failure(.invalidValue(field: "/img", reason: #""http://cdn.example.com/a.png" is not an https:// URL"#)))
        #expect(mapping.render(event, now: renderNow).map(\.count) == failure.map(\.count))
    }

    @Test("interruption and relevance go to aps, relevance as a JSON number")
    func interruptionAndRelevance() throws {
        let message = try Self.message(try load(Self.mapping("    interruption: time-sensitive\n    relevance: 0.9\n")))
        let aps = message?["apns"]?["payload"]?["aps"]
        #expect(aps?["interruption-level"] == .string("time-sensitive"))
        #expect(aps?["relevance-score"] == .double(0.9))
        #expect(message?["android"]?["notification"]?["interruption-level"] == nil)
        let one = try Self.message(try load(Self.mapping("    relevance: 1\n")))
        #expect(one?["apns"]?["payload"]?["aps"]?["relevance-score"] == .int(1))
        let critical = try load(Self.mapping("    interruption: critical\n"))
        #expect(critical.warnings.map(\.message) == ["a critical alert needs Apple's Critical Alerts entitlement in the app"])
    }

    @Test(
        "mistakes are load errors at their line",
        arguments: [
            ("    image: http://cdn.example.com/a.png\n", "image \"http://cdn.example.com/a.png\" is not an https:// URL"),
            ("    image: https://a.example/x.png\n    android: {image: https://b.example/y.png}\n", "`image` and `android.image` are both given"),
            ("    interruption: urgent\n", "interruption must be one of passive, active, time-sensitive, critical"),
            ("    relevance: 1.5\n", "relevance must be a number from 0 to 1"),
            ("    relevance: high\n", "relevance must be a number from 0 to 1"),
        ])
    func mistakes(yaml: String, message: String) {
        let errors = loadErrors(Self.mapping(yaml))
        #expect(errors.map(\.message) == [message], "\(errors)")
        #expect(errors.first?.line == 6)
    }

    @Test("a silent push takes none of them")
    func silent() {
        let errors = loadErrors("version: 1\nevents:\n  e:\n    target: {token: t}\n    silent: true\n    image: https://a.example/x.png\n")
        #expect(errors.map(\.message) == ["a silent push shows no notification, so `image` would be dropped"])
    }
}
