import Dates
import FCMEmulator
import Foundation
import JSON
import Kafka
import TestSupport
import Testing

/// Digests with `pushbridge run` on tansu (docs/mapping.md, *Digests*): events of a mapping with
/// `digest` go through the rules stage (re-key mode) to the owner of their user's state
/// partition, which keeps each key's window and sends one push at its end: the mapping's own
/// keys for one event, `many`'s with the count and actors for more; `first: now` sends the first
/// at once. A worker killed -9 mid-window loses nothing: the next one restores the window from
/// the changelog and closes it once.
@Suite("Digests: pushbridge run on tansu (separate processes)", .serialized)
struct DigestEndToEndTests {
    static let mapping = """
        version: 1
        event: {id: /id}
        events:
          comment.created:
            target: {user: {field: /user}}
            digest: {window: 15s, by: [user, {field: /post}], actors: {field: /actor}}
            body: {key: comment_body, args: [{field: /actor}]}
            many:
              body: {key: comment_digest_body, args: [{digest: count}, {digest: first_actor}, {digest: others}]}
          like.created:
            target: {user: {field: /user}}
            digest: {window: 15s, first: now}
            body: {key: like_body}
            many:
              body: {key: like_digest_body, args: [{digest: count}]}
        """
    static let users = ["ann", "ben", "cat", "dan"]

    static func start(group: String) async throws -> EndToEnd {
        let e = try await EndToEnd(partitions: 2)
        try mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        try await e.createTopic("pushbridge.\(group).by-subject", partitions: 2)
        try await e.createTopic("pushbridge.\(group).rules-changelog", partitions: 2)
        try await e.createTopic("devices", partitions: 1)
        let backend = try KafkaProducer(configuration: KafkaProducerConfiguration(bootstrapServers: [e.bootstrapServers]))
        for user in users { _ = try await backend.send(TimersCLIEndToEndTests.phone(of: user)) }
        await backend.close()
        return e
    }

    static func sections(_ e: EndToEnd, _ n: Int) -> String {
        """
        registry: {topic: devices, path: \(e.directory.appendingPathComponent("registry-\(n).sqlite").path)}
        rules: {state_path: \(e.directory.appendingPathComponent("rules-\(n).sqlite").path)}
        """
    }

    static func comment(_ id: String, user: String, post: String, actor: String) -> String {
        #"{"type":"comment.created","id":"\#(id)","user":"\#(user)","post":"\#(post)","actor":"\#(actor)"}"#
    }

    /// Each accepted push of `user`'s phone: its Android body key and args.
    static func pushes(_ e: EndToEnd, _ user: String) -> [(key: String, args: [String])] {
        e.emulator.messages.filter { $0.token == "\(user)-phone" && !$0.validateOnly }.map { m in
            let n = m.message["android"]?["notification"]
            let args: [String] = if case .array(let items)? = n?["body_loc_args"] { items.compactMap(\.stringValue) } else { [] }
            return (n?["body_loc_key"]?.stringValue ?? "?", args)
        }
    }

    /// `many`'s args for `count` comments by Bob and Al: the count, the first actor, one other.
    static func digestArgs(_ args: [String], count: Int) -> Bool {
        args.count == 3 && args[0] == String(count) && ["Bob", "Al"].contains(args[1]) && args[2] == "1"
    }

    static func waitForPushes(_ e: EndToEnd, _ expected: [String: Int], timeout: Duration = .seconds(120)) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline, !expected.allSatisfy({ pushes(e, $0.key).count >= $0.value }) {
            try await Task.sleep(for: .milliseconds(250))
        }
        try await Task.sleep(for: .seconds(2))  // nothing more may come
    }

    @Test("one comment goes alone at the window's end; three become one many push with the count and actors; first: now sends the first like at once")
    func windows() async throws {
        let e = try await Self.start(group: "e2e-digest")
        let worker = try await e.startWorker(group: "e2e-digest", sections: Self.sections(e, 1))
        let started = RFC3339.nowMilliseconds()
        try await e.produceRaw([
            Self.comment("c1", user: "ann", post: "p1", actor: "Bob"),
            Self.comment("c2", user: "ben", post: "p1", actor: "Bob"), Self.comment("c3", user: "ben", post: "p1", actor: "Al"),
            Self.comment("c4", user: "ben", post: "p1", actor: "Bob"), Self.comment("c5", user: "ben", post: "p2", actor: "Cy"),
            #"{"type":"like.created","id":"l1","user":"cat"}"#, #"{"type":"like.created","id":"l2","user":"cat"}"#,
            #"{"type":"like.created","id":"l3","user":"dan"}"#,
        ])
        #expect(try await e.waitUntilCommitted(group: "e2e-digest", timeout: .seconds(90)), "\(worker.output.suffix(3000))")
        try await Self.waitForPushes(e, ["ann": 1, "ben": 2, "cat": 2, "dan": 1])
        let ann = Self.pushes(e, "ann")
        let ben = Self.pushes(e, "ben")
        let cat = Self.pushes(e, "cat")
        let dan = Self.pushes(e, "dan")
        #expect(ann.map(\.key) == ["comment_body"] && ann.first?.args == ["Bob"], "one comment, alone: \(ann)")
        #expect(ben.count == 2, "one push per post: \(ben)")
        // The first actor is whoever's event the owner took first: the three are taken concurrently.
        #expect(ben.contains { $0.key == "comment_digest_body" && Self.digestArgs($0.args, count: 3) }, "three on p1, two actors: \(ben)")
        #expect(ben.contains { $0.key == "comment_body" && $0.args == ["Cy"] }, "one on p2: \(ben)")
        #expect(cat.map(\.key) == ["like_body", "like_body"], "the first at once, the second alone at the end: \(cat)")
        #expect(dan.map(\.key) == ["like_body"], "first: now and nothing after it: one push: \(dan)")
        let sentAt = e.emulator.messages.filter { $0.token == "ann-phone" }.map { Int64((e.emulator.startedEpochSeconds + $0.time) * 1000) }
        #expect(sentAt.allSatisfy { $0 >= started + 15_000 - 1_000 }, "not before the window's end")
        #expect(try worker.metric(#"pushbridge_digest_members_total{event_type="comment.created"}"#) == 5)
        await expectCleanExit(worker)
        await e.stop()
    }

    @Test("validate says how each digest groups")
    func validate() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("digest-\(UUID().uuidString).yaml")
        try Self.mapping.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let r = try await runPushbridge(["validate", file.path])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("comment.created: digested: one push per 15s window per user and /post; two or more send many's keys"), "\(r.out)")
        #expect(r.out.contains("like.created: digested: one push per 15s window per user, the first sent at once"), "\(r.out)")
    }

    @Test("a worker killed -9 mid-window: the next restores the window from the changelog and sends one push for all its events")
    func killedMidWindow() async throws {
        let e = try await Self.start(group: "e2e-digest-kill")
        let first = try await e.startWorker(group: "e2e-digest-kill", sections: Self.sections(e, 1))
        try await e.produceRaw((1...4).map { Self.comment("k\($0)", user: "ann", post: "p9", actor: $0 % 2 == 0 ? "Al" : "Bob") })
        #expect(try await e.waitUntilCommitted(group: "e2e-digest-kill", timeout: .seconds(90)), "\(first.output.suffix(3000))")
        #expect(Self.pushes(e, "ann").isEmpty, "the window is still open")
        await first.kill9()
        let second = try await e.startWorker(group: "e2e-digest-kill", sections: Self.sections(e, 2))
        try await Self.waitForPushes(e, ["ann": 1])
        let ann = Self.pushes(e, "ann")
        #expect(
            ann.count == 1 && ann.first?.key == "comment_digest_body" && Self.digestArgs(ann.first?.args ?? [], count: 4),
            "\(ann)\n\(second.output.suffix(3000))"
        )
        await expectCleanExit(second)
        await e.stop()
    }
}
