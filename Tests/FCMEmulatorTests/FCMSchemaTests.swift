import Foundation
import TestSupport
import Testing

@testable import FCMEmulator

/// The emulator's table of FCM's `Message` (DiscoverySchema.generated.swift) is what the pinned
/// discovery document says: regenerated here from the wheel, and its counts and enums checked
/// against the numbers docs/emulator.md and the design of issue 53 quote. The same run checks
/// what the script generates for the `fcm:` overlay: the mapping loader's copy of the table
/// (Sources/Mapping/Load/FCMSchema.generated.swift) and its `$defs` in
/// schemas/mapping.schema.json.
@Suite("The emulator's FCM schema is the pinned discovery document's")
struct FCMSchemaTests {
    /// Where scripts/setup.sh keeps the wheel; else a download cache of this checkout's own.
    static var wheelCache: String {
        let tools = Repository.tool("fcm")
        return FileManager.default.fileExists(atPath: tools + "/google_api_python_client-2.202.0-py3-none-any.whl")
            ? tools : Repository.root + "/.build/fcm-schema"
    }

    @Test("the committed tables and overlay schema are what scripts/fcm-schema.py generates from the pinned wheel now")
    func generatedTableIsCurrent() async throws {
        let (status, output) = try await ChildProcess.run(
            "/usr/bin/env", ["python3", Repository.root + "/scripts/fcm-schema.py", "--check", "--cache", Self.wheelCache],
            timeout: .seconds(300))
        #expect(status == 0, "\(output.suffix(4000))")
    }

    @Test("revision 20261023: 61 leaves of Message, 42 more under android_v2")
    func leaves() {
        #expect(DiscoverySchema.revision == "20261023")
        let all = DiscoverySchema.leaves()
        let v2 = all.filter { $0.path.hasPrefix("android_v2.") }
        #expect(all.count - v2.count == 61)
        #expect(v2.count == 42)
        let deprecated = Set(all.filter(\.field.deprecated).map(\.path))
        #expect(deprecated == ["token", "android.notification.bypass_proxy_notification"])
        #expect(Set(all.filter(\.field.outputOnly).map(\.path)) == ["name"])
        // The one field-less message: its presence is its value.
        #expect(all.contains { $0.path == "android_v2.background_sync" && $0.field.kind == .message("AndroidBackgroundSyncMessage") })
        let kinds = Dictionary(uniqueKeysWithValues: all.map { ($0.path, $0.field) })
        #expect(kinds["android.notification.event_time"]?.kind == .timestamp)
        #expect(kinds["android.notification.vibrate_timings"] == .init(.duration, repeated: true))
        #expect(kinds["android.notification.light_settings.color.alpha"]?.kind == .float)
        #expect(kinds["android.notification.light_settings.light_on_duration"] == .init(.duration, required: true))
        #expect(kinds["android_v2.remote_notification.notification.id"]?.kind == .int32)
        #expect(kinds["apns.payload"]?.kind == .freeObject && kinds["webpush.notification"]?.kind == .freeObject)
        #expect(kinds["webpush.headers"]?.kind == .stringMap)
    }

    @Test("the enums and their values, in the document's order")
    func enums() {
        var enums: [String: [String]] = [:]
        for leaf in DiscoverySchema.leaves() {
            if case .enumeration(let values) = leaf.field.kind { enums[leaf.path] = values }
        }
        let priority = ["PRIORITY_UNSPECIFIED", "PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH", "PRIORITY_MAX"]
        let visibility = ["VISIBILITY_UNSPECIFIED", "PRIVATE", "PUBLIC", "SECRET"]
        #expect(
            enums == [
                "android.priority": ["NORMAL", "HIGH"],
                "android.notification.notification_priority": priority,
                "android.notification.proxy": ["PROXY_UNSPECIFIED", "ALLOW", "DENY", "IF_PRIORITY_LOWERED"],
                "android.notification.visibility": visibility,
                "android_v2.remote_notification.notification.notification_priority": priority,
                "android_v2.remote_notification.notification.visibility": visibility,
            ])
    }
}
