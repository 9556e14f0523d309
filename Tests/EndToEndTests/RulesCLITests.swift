import Foundation
import TestSupport
import Testing

/// `render --user-state`: a user target rendered with a registry record from a file, the user's
/// rules applied at `--now` (docs/rules.md).
@Suite("render --user-state: a user's devices and rules from a registry record")
struct RulesCLITests {
    static let base = ["render", "--mappings", "examples/registry/mapping.yaml"]

    @Test("user-42 gets one body per device; user-44 muted chats: withheld, exit 2, the reason and its code")
    func muted() async throws {
        let sent = try await runPushbridge(
            Self.base + ["--event", "examples/events/chat-message.user.json", "--user-state", "examples/registry/user-42.json"])
        #expect(sent.status == 0, "\(sent.err)")
        #expect(sent.out.split(separator: "\n").count == 2, "\(sent.out)")
        let muted = try await runPushbridge(
            Self.base + ["--event", "examples/events/chat-message.user-44.json", "--user-state", "examples/registry/user-44.json"])
        #expect(muted.status == 2 && muted.out.isEmpty)
        #expect(muted.err == "cannot render: user user-44 muted the category \"chats\" [muted]\n", "\(muted.err)")
    }

    @Test("validate accepts examples/registry's mapping, whose post.liked has a cap and comment.created a digest, as run loads it")
    func validateCap() async throws {
        let r = try await runPushbridge(["validate", "examples/registry/mapping.yaml"])
        #expect(r.status == 0 && r.out.hasPrefix("ok: 1 file, 3 event types: chat.message, comment.created, post.liked"), "\(r.out)\(r.err)")
        #expect(r.out.contains("comment.created: digested: one push per 10s window per user and /post/id"), "\(r.out)")
    }

    @Test("quiet hours judged at --now in the user's zone, across Berlin's spring-forward night; a malformed preference is named and left out")
    func quietHours() async throws {
        let folder = try TemporaryFolder()
        let record = folder.path("night-owl.json")
        try #"{"devices": [{"token": "t-1"}], "time_zone": "Europe/Berlin", "quiet_hours": {"from": "22:00", "to": "07:30"}, "muted": "chats"}"#
            .write(toFile: record, atomically: true, encoding: .utf8)
        let args = Self.base + ["--event", "examples/events/chat-message.user.json", "--user-state", record]
        // 05:29:59Z on 28 March 2027 is 07:29:59 CEST: inside; 05:30Z is 07:30 CEST: outside.
        let inside = try await runPushbridge(args + ["--now", "2027-03-28T05:29:59Z"])
        #expect(inside.status == 2, "\(inside.err)")
        #expect(
            inside.err.hasSuffix(
                "cannot render: local time 07:29 in Europe/Berlin is inside the quiet hours 22:00–07:30, which end at 2027-03-28T05:30:00.000Z [quiet_hours]\n"
            ), "\(inside.err)")
        #expect(inside.err.hasPrefix("--user-state: muted left out: its value is not one the format allows\n"), "\(inside.err)")
        let outside = try await runPushbridge(args + ["--now", "2027-03-28T05:30:00Z"])
        #expect(outside.status == 0 && outside.out.split(separator: "\n").count == 1, "\(outside.err)")
        // The evening before: 21:00Z is 22:00 CET.
        #expect(try await runPushbridge(args + ["--now", "2027-03-27T20:59:59Z"]).status == 0)
        #expect(try await runPushbridge(args + ["--now", "2027-03-27T21:00:00Z"]).status == 2)
    }

    @Test("preview --user-state: what user-42's two phones show; user-44's push withheld with its reason")
    func preview() async throws {
        let args = [
            "preview", "--mappings", "examples/registry/mapping.yaml", "--android-res", "examples/resources/android/res", "--locale", "de",
        ]
        let shown = try await runPushbridge(
            args + ["--event", "examples/events/chat-message.user.json", "--user-state", "examples/registry/user-42.json"])
        #expect(shown.status == 0, "\(shown.err)")
        #expect(shown.out.contains("chat.message (examples/registry/mapping.yaml:"), "\(shown.out)")
        #expect(shown.out.contains(": 2 messages"), "\(shown.out)")
        #expect(shown.out.contains("new_message_body"), "\(shown.out)")
        let withheld = try await runPushbridge(
            args + ["--event", "examples/events/chat-message.user-44.json", "--user-state", "examples/registry/user-44.json"])
        #expect(withheld.status == 2)
        #expect(withheld.err.contains("cannot render: user user-44 muted the category \"chats\" [muted]"), "\(withheld.err)")
    }
}
