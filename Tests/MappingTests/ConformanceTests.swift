import Foundation
import Testing

@testable import Mapping

@Suite("Output conforms to the FCM v1 API reference")
struct ConformanceTests {
    /// Checks a message against the documented rules that our mappings can break.
    static func violations(_ m: JSONValue) -> [String] {
        var v: [String] = []
        guard case .object(let members) = m else { return ["message is not an object"] }
        let targets = members.map(\.key).filter { ["fid", "token", "topic", "condition"].contains($0) }
        if targets.count != 1 { v.append("targets: \(targets)") }
        let known: Set = ["fid", "token", "topic", "condition", "android", "apns", "data", "notification", "webpush", "fcm_options", "name"]
        for k in members.map(\.key) where !known.contains(k) { v.append("unknown field \(k)") }
        if case .string(let topic)? = m["topic"], topic.hasPrefix("/topics/") { v.append("topic keeps /topics/") }
        if let android = m["android"] {
            if case .string(let ttl)? = android["ttl"], !(ttl.hasSuffix("s") && Int(ttl.dropLast()) != nil) { v.append("ttl \(ttl)") }
            if let p = android["priority"], p != .string("HIGH"), p != .string("NORMAL") { v.append("priority \(p)") }
            if let n = android["notification"] {
                for k in ["title_loc_args", "body_loc_args"] { if let a = n[k] { v += stringArray(a, k) } }
                if n["title_loc_args"] != nil && n["title_loc_key"] == nil { v.append("title args without key") }
                if n["body_loc_args"] != nil && n["body_loc_key"] == nil { v.append("body args without key") }
            }
        }
        if let alert = m["apns"]?["payload"]?["aps"]?["alert"] {
            for k in ["title-loc-args", "loc-args"] { if let a = alert[k] { v += stringArray(a, k) } }
        }
        if case .object(let data)? = m["data"] {
            for (k, value) in data {
                if case .string = value {} else { v.append("data \(k) not a string") }
            }
        }
        return v
    }

    static func stringArray(_ a: JSONValue, _ name: String) -> [String] {
        guard case .array(let items) = a else { return ["\(name) is not an array"] }
        return items.allSatisfy { if case .string = $0 { true } else { false } } ? [] : ["\(name) has non-strings"]
    }

    @Test(
        "every example event renders to messages with no violations",
        arguments: [
            "welcome.json", "new-message.json", "stock.json", "order-shipped.cloudevent.json", "inbox-sync.json",
        ])
    func examples(event: String) throws {
        let rendered = try exampleMappings().render(EventRecord(value: Array(try exampleEvent(event).utf8))).get()
        #expect(!rendered.messages.isEmpty)
        for m in rendered.messages {
            #expect(Self.violations(m.json) == [])
            // Our writer's output parses back as the same JSON (members compared in sorted order).
            let parsed = try #require(try JSONParser.parse(m.requestBody())["message"])
            #expect(JSONWriter.write(parsed) == JSONWriter.write(m.json))
        }
    }
}
