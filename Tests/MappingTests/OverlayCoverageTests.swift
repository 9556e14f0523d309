import Foundation
import JSON
import Testing

@testable import FCMEmulator
@testable import Mapping

/// Every leaf of FCM's `Message` (FCMSchema, from the pinned discovery document) is either
/// written by the `fcm:` overlay, in a message the FCM emulator accepts with no device notes, or
/// left out deliberately, with its reason in docs/mapping.md. A leaf that a future revision adds
/// fails here until it is placed.
@Suite("Every field of FCM's Message is writable through fcm:, or left out on purpose")
struct OverlayCoverageTests {
    /// The leaves the overlay refuses, and why (docs/mapping.md lists them).
    static let leftOut: [String: String] = [
        "token": "a target: the mapping's `target:`", "fid": "a target: the mapping's `target:`",
        "topic": "a target: the mapping's `target:`", "condition": "a target: the mapping's `target:`",
        "name": "output only", "data": "the mapping's `data:`",
        "android.notification.bypass_proxy_notification": "deprecated",
    ]

    static let leaves = Mapping.FCMSchema.leaves().filter { !$0.path.hasPrefix("android_v2.") }

    @Test("revision 20261023: 61 leaves outside android_v2, and the table is the emulator's")
    func count() {
        #expect(Self.leaves.count == 61)
        #expect(Mapping.FCMSchema.leaves().map(\.path) == DiscoverySchema.leaves().map(\.path))
        #expect(Mapping.FCMSchema.revision == DiscoverySchema.revision)
    }

    /// A value FCM and a phone take for `leaf`, as YAML.
    static func sample(_ leaf: Mapping.FCMSchema.Leaf) -> String {
        switch leaf.path {
        case "android.notification.color": return "'#112233'"
        case "notification.image", "android.notification.image", "apns.fcm_options.image", "webpush.fcm_options.link":
            return "https://example.com/a.png"
        case "apns.headers": return "{apns-id: 123e4567-e89b-12d3-a456-426614174000}"
        case "webpush.headers": return "{Urgency: high}"
        case "apns.payload": return "{deeplink: {field: /url}}"
        case "webpush.notification": return "{title: Hi, requireInteraction: true}"
        case "android.notification.vibrate_timings": return "['0s', '0.2s']"
        default: break
        }
        var value: String
        switch leaf.field.kind {
        case .string: value = "x"
        case .bool: value = "true"
        case .int32: value = "3"
        case .float: value = "0.5"
        case .duration: value = "'1.5s'"
        case .timestamp: value = "'2026-11-22T10:00:00Z'"
        case .enumeration(let names): value = names[1]
        case .stringMap: value = "{k: v}"
        case .freeObject: value = "{k: v}"
        case .message: value = "{}"
        }
        if leaf.field.repeated { value = "[\(value)]" }
        return value
    }

    /// A minimal mapping whose overlay sets `leaf`: a silent push unless the leaf is shown, and
    /// a key for the title or the body that does not clash with it.
    static func mapping(_ leaf: Mapping.FCMSchema.Leaf) -> String {
        let path = leaf.path.split(separator: ".").map(String.init)
        var value = sample(leaf)
        var parts = path
        if path.prefix(3) == ["android", "notification", "light_settings"] {
            parts = Array(path.prefix(3))
            var settings = ["light_on_duration": "'0.5s'", "light_off_duration": "'1.5s'", "color": "{red: 1}"]
            if path[3] == "color" {
                settings["color"] = "{\(path[4]): \(value)}"
            } else {
                settings[path[3]] = value
            }
            value = "{" + settings.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        }
        var yaml = value
        for part in parts.reversed() { yaml = "{\(part): \(yaml)}" }
        let shown = MappingLoader.displayedPaths.contains { path.starts(with: $0) }
        if leaf.path == "apns.fcm_options.image" { yaml = "{apns: {fcm_options: {image: \(value)}, payload: {aps: {mutable-content: 1}}}}" }
        let rest =
            !shown
            ? "silent: true"
            : leaf.path.hasSuffix("title_loc_args") || (leaf.path.contains("body") && !leaf.path.hasSuffix("body_loc_args"))
                ? "title: {key: t}" : "body: {key: b}"
        return "version: 1\nevents:\n  e:\n    target: {token: t}\n    \(rest)\n    fcm: \(yaml)\n"
    }

    @Test("each leaf: written by the overlay, accepted by the emulator with no device notes; or refused as listed", arguments: leaves)
    func leaf(_ leaf: Mapping.FCMSchema.Leaf) throws {
        let yaml = Self.mapping(leaf)
        if Self.leftOut[leaf.path] != nil {
            #expect(!loadErrors(yaml).isEmpty, "the overlay must refuse \(leaf.path)")
            return
        }
        let set = try load(yaml)
        let body = try #require(try bodies(set, #"{"type":"e","id":"1","url":"https://example.com"}"#).first)
        var validator = MessageValidator()
        let result = validator.validate(body: Array(body.utf8))
        if leaf.path == "apns.live_activity_token" {
            // Written, but a Live Activity also needs apns-push-type liveactivity, which the
            // mapping's own keys set to alert or background: the overlay alone cannot send one
            // (docs/mapping.md, *Any other FCM field*).
            #expect(result == nil && validator.violations.map(\.field) == ["message.apns.headers.apns-push-type"], "\(validator.violations)")
            #expect(body.contains(#""live_activity_token":"x""#))
            return
        }
        let accepted = try #require(result, "\(leaf.path): \(validator.violations) in \(body)")
        #expect(DeviceNote.notes(for: accepted.message).isEmpty, "\(leaf.path): \(DeviceNote.notes(for: accepted.message))")
        var value: JSONValue? = accepted.message
        for part in leaf.path.split(separator: ".") { value = value?[String(part)] }
        #expect(value != nil, "\(leaf.path) is not in \(body)")
    }

    @Test("OverlayTests' mapping, docs/mapping.md's example and more: accepted with no device notes")
    func example() throws {
        let set = try load(OverlayTests.mappings)
        for json in [OverlayTests.events[0], OverlayTests.events[1], OverlayTests.events[6]] {
            let body = try #require(try bodies(set, json).first)
            var validator = MessageValidator()
            let result = validator.validate(body: Array(body.utf8))
            let accepted = try #require(result, "\(validator.violations) in \(body)")
            #expect(DeviceNote.notes(for: accepted.message).isEmpty, "\(DeviceNote.notes(for: accepted.message))")
        }
    }

    @Test("docs/mapping.md lists every leaf left out")
    func documented() throws {
        let text = try String(contentsOfFile: repositoryRoot + "/docs/mapping.md", encoding: .utf8)
        for path in Self.leftOut.keys.sorted() {
            #expect(text.contains("| `\(path)` |"), "docs/mapping.md does not list \(path)")
        }
        #expect(Set(Self.leftOut.keys).isSubset(of: Set(Self.leaves.map(\.path))))
    }
}

extension Mapping.FCMSchema.Leaf: CustomTestStringConvertible {
    public var testDescription: String { path }
}
