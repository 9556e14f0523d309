import Dates
import Foundation
import Mapping
import Pipeline
import Rules
import RulesStore
import TestSupport
import Testing

/// `render --rules-store` and `preview --rules-store`: whether a push of a capped mapping would
/// be withheld, judged by the engine's decision over a real rules store file, filled here through
/// the `RulesStore` API with what a worker writes after FCM acknowledged two pushes.
@Suite("render and preview --rules-store: a worker's rules store says what caps and dedup withhold")
struct RulesStoreCLITests {
    /// chat.message to a token, capped at 2 per device per hour (which implies dedup over the hour).
    static let mapping = RulesEngineEndToEndTests.mapping

    static let now = RFC3339.parseMilliseconds("2027-01-15T12:00:00Z")!

    static func event(_ id: String, _ token: String) -> String { #"{"type":"chat.message","id":"\#(id)","token":"\#(token)"}"# }

    /// A store in which FCM acknowledged e1 (50 minutes before `now`) and e2 (20 minutes
    /// before) for token tok-1: its facts as an owner writes them, reserved then sent.
    static func store(in folder: TemporaryFolder, now: Int64 = Self.now) throws -> String {
        let set = try MappingSet.load(files: [("m.yaml", mapping)], statefulRules: true)
        let path = folder.path("rules.sqlite")
        let store = try RulesStore(path: path)
        var facts: [(offset: Int64, fact: Fact)] = []
        for (id, minutesAgo) in [("e1", Int64(50)), ("e2", 20)] {
            guard case .success(let rendered) = set.render(EventRecord(value: Array(event(id, "tok-1").utf8))) else {
                Issue.record("\(id) does not render")
                continue
            }
            let mapping = try #require(set.stateful(of: "chat.message"))
            let attempt = StatefulPush.attempt(
                rendered, mapping: "chat.message", rules: mapping.rules, stateful: mapping.stateful, policy: StatefulPush.policy)
            let at = now - minutesAgo * 60_000
            let pushes = attempt.targets.map { DevicePushID(notification: attempt.notification, target: $0) }
            let reserved = NotificationFact(
                notification: attempt.notification, status: .reserved, attempt: 1, at: at, expires: attempt.expiry(from: at), owner: "w1",
                subject: attempt.subject)
            let sent = NotificationFact(
                notification: attempt.notification, status: .sent, attempt: 1, at: at + 40, expires: attempt.expiry(from: at), owner: "w1",
                devices: pushes)
            facts += [(Int64(facts.count), .notification(reserved)), (Int64(facts.count + 1), .notification(sent))]
        }
        try store.apply(partition: 0, facts: facts)
        return path
    }

    @Test(
        "a repeat is withheld as a duplicate, a third push by the full cap (when the oldest leaves the window), another device's sent; without the store, render names the rules"
    )
    func render() async throws {
        let folder = try TemporaryFolder()
        try Self.mapping.write(toFile: folder.path("m.yaml"), atomically: true, encoding: .utf8)
        let path = try Self.store(in: folder)
        let render = ["render", "--mappings", folder.path("m.yaml"), "--now", "2027-01-15T12:00:00Z", "--event", "-"]

        let repeated = try await runPushbridge(render + ["--rules-store", path], stdin: Self.event("e2", "tok-1"))
        #expect(repeated.status == 2 && repeated.out.isEmpty)
        #expect(
            repeated.err
                == "cannot render: FCM already acknowledged this push to every device within the dedup window, last at 2027-01-15T11:40:00.040Z (cap 2 per 1h by device, dedup 1h) [duplicate]\n",
            "\(repeated.err)")
        let third = try await runPushbridge(render + ["--rules-store", path], stdin: Self.event("e3", "tok-1"))
        #expect(third.status == 2 && third.out.isEmpty)
        #expect(
            third.err
                == "cannot render: the cap is reached: 2 of 2 counted in the cap's window, the oldest leaves the window at 2027-01-15T12:10:00.040Z (cap 2 per 1h by device, dedup 1h) [cap]\n",
            "\(third.err)")
        // An hour after the first: it left the window, there is room again.
        let later = try await runPushbridge(
            ["render", "--mappings", folder.path("m.yaml"), "--now", "2027-01-15T12:10:00.041Z", "--event", "-", "--rules-store", path],
            stdin: Self.event("e3", "tok-1"))
        #expect(later.status == 0 && later.out.contains(#""token":"tok-1""#), "\(later.err)")
        #expect(later.err.contains("rules store: cap 2 per 1h by device, dedup 1h; 1 of 2 counted in the cap's window"), "\(later.err)")
        let other = try await runPushbridge(render + ["--rules-store", path], stdin: Self.event("e3", "tok-2"))
        #expect(other.status == 0 && other.out.contains(#""token":"tok-2""#), "\(other.err)")
        #expect(other.err == "rules store: cap 2 per 1h by device, dedup 1h; 0 of 2 counted in the cap's window: would be sent\n", "\(other.err)")

        let unjudged = try await runPushbridge(render, stdin: Self.event("e2", "tok-1"))
        #expect(unjudged.status == 0 && unjudged.out.contains(#""token":"tok-1""#))
        #expect(
            unjudged.err == "cap 2 per 1h by device, dedup 1h: decided by the workers' shared state (--rules-store PATH reads a worker's)\n",
            "\(unjudged.err)")
        let missing = try await runPushbridge(render + ["--rules-store", folder.path("nope.sqlite")], stdin: Self.event("e2", "tok-1"))
        #expect(missing.status == 1 && missing.err.contains("no rules store there"), "\(missing.err)")
        #expect(!FileManager.default.fileExists(atPath: folder.path("nope.sqlite")), "read-only: nothing created")
    }

    @Test("preview --rules-store withholds a push over the cap with the same reason")
    func preview() async throws {
        let folder = try TemporaryFolder()
        try Self.mapping.write(toFile: folder.path("m.yaml"), atomically: true, encoding: .utf8)
        // preview judges at the clock.
        let path = try Self.store(in: folder, now: Int64(Date().timeIntervalSince1970 * 1000))
        let third = try await runPushbridge(
            [
                "preview", "--mappings", folder.path("m.yaml"), "--android-res", "examples/resources/android/res", "--event", "-",
                "--rules-store", path,
            ], stdin: Self.event("e3", "tok-1"))
        #expect(third.status == 2, "\(third.err)")
        #expect(third.err.contains("cannot render: the cap is reached: 2 of 2 counted") && third.err.hasSuffix("[cap]\n"), "\(third.err)")
    }
}
