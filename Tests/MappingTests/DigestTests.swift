import JSON
import Testing

@testable import Mapping

/// `digest:` and `many:` (docs/mapping.md, *Digests*): what loads, what is refused at its line,
/// the window's key, and `many` rendered with what a window gathered. Workers do not run digests
/// yet; these are the mapping core's parts.
@Suite("Digests: loading, keys, many's render")
struct DigestTests {
    static let mapping = """
        version: 1
        events:
          comment.created:
            target: {user: {field: /post/author_id}}
            category: social
            replace_id: {field: /post/id}
            digest:
              window: 10m
              by: [user, {field: /post/id}]
              first: now
              actors: {field: /actor/name}
            title: {key: comment_title}
            body: {key: comment_body, args: [{field: /actor/name}, {field: /post/title}]}
            many:
              body: {key: comment_digest_body, args: [{digest: count}, {digest: first_actor}, {digest: others}, {field: /post/title}]}
        """

    @Test("a digest loads with its window, key, first, actors and many (merged over the mapping's own keys)")
    func loads() throws {
        let set = try load(Self.mapping)
        let m = try #require(set.mappings["comment.created"])
        let digest = try #require(m.digest)
        #expect(digest.windowSeconds == 600 && digest.first == .now)
        #expect(digest.by == [JSONPointer("/post/id")!] && digest.actors == JSONPointer("/actor/name")!)
        #expect(m.body?.key?.androidKey == "comment_body")
        #expect(digest.many.body?.key?.androidKey == "comment_digest_body")
        #expect(digest.many.title?.key?.androidKey == "comment_title", "the mapping's own title, not replaced")
        #expect(digest.many.body?.key?.args.first == .digest(.count))
        #expect(set.digesting.map(\.eventType) == ["comment.created"])
        #expect(
            m.digestSummary
                == "comment.created: digested: one push per 10m window per user and /post/id, the first sent at once; two or more send many's keys"
        )
    }

    @Test("many renders a window's count and actors as string args, and the last event's fields")
    func rendersMany() throws {
        let digest = try #require(try load(Self.mapping).mappings["comment.created"]?.digest)
        let data = try JSONParser.parse(#"{"post": {"id": "p1", "author_id": "u1", "title": "Hello"}, "actor": {"name": "Cy"}}"#)
        var event = DecodedEvent(type: "comment.created", id: "e5", data: data, format: .json)
        event.digest = DigestSummary(count: 5, firstActor: "Bob", lastActor: "Cy", distinctActors: 3)
        let messages = try digest.many.render(event, now: 1_800_000_000, devices: [UserDevice(kind: .fid, id: "fid-1", platform: "android")]).get()
        let android = try #require(messages.first?.json["android"]?["notification"])
        #expect(android["body_loc_key"] == .string("comment_digest_body"))
        #expect(android["body_loc_args"] == .array([.string("5"), .string("Bob"), .string("2"), .string("Hello")]))
        #expect(android["title_loc_key"] == .string("comment_title"))
    }

    @Test("the key is the user and each by field's value; what a window gathered reads as strings")
    func keysAndValues() throws {
        let digest = try #require(try load(Self.mapping).mappings["comment.created"]?.digest)
        let data = try JSONParser.parse(#"{"post": {"id": 42}}"#)
        #expect(digest.key(user: "u1", data: data) == "u1\u{1F}42")
        #expect(digest.key(user: "u1", data: .object([])) == "u1\u{1F}", "a missing field is empty")
        let withActors = DigestSummary(count: 4, firstActor: "Bob", lastActor: "Al", distinctActors: 2)
        #expect(DigestValue.allCases.map(withActors.text) == ["4", "1", "Bob", "Al"])
        let without = DigestSummary(count: 4)
        #expect(DigestValue.allCases.map(without.text) == ["4", "3", "", ""], "others: the count less one without actors")
    }

    @Test(
        "refused at its line, saying why",
        arguments: [
            ("digest: {window: 10m}", 6, "a digest needs `many`"),
            ("many: {body: {key: m}}", 6, "`many` goes with `digest`"),
            ("digest: {window: 5s}\n    many: {body: {key: m}}", 6, "digest.window \"5s\" is not a duration from 10s to 24h"),
            ("digest: {window: 2d}\n    many: {body: {key: m}}", 6, "digest.window \"2d\" is not a duration from 10s to 24h"),
            ("digest: {by: [user]}\n    many: {body: {key: m}}", 6, "digest needs a `window`"),
            ("digest: {window: 10m, by: [{field: /p}]}\n    many: {body: {key: m}}", 6, "digest.by must be a list starting with `user`"),
            ("digest: {window: 10m, first: later}\n    many: {body: {key: m}}", 6, "digest.first must be `hold`"),
            ("digest: {window: 10m, actors: /a}\n    many: {body: {key: m}}", 6, "digest.actors must be `{field: /pointer}`"),
            ("digest: {window: 10m, every: 1}\n    many: {body: {key: m}}", 6, "unknown field `every` in `digest`"),
            ("digest: {window: 10m}\n    many: {target: {topic: x}}", 7, "unknown field `target` in `many`"),
            ("digest: {window: 10m}\n    many: {body: {key: m, args: [{digest: total}]}}", 7, "digest must be one of count, others"),
            ("digest: {window: 10m}\n    many: {body: {key: m}}\n    send_at: {after: 1h}", 8, "`send_at` does not go with `digest`"),
            ("digest: {window: 10m}\n    many: {body: {key: m}}\n    critical: true", 8, "`critical` does not go with `digest`"),
        ] as [(String, Int, String)])
    func refused(lines: String, line: Int, message: String) {
        let errors = loadErrors("version: 1\nevents:\n  e:\n    target: {user: {field: /u}}\n    body: {key: b, args: [{field: /x}]}\n    \(lines)\n")
        #expect(errors.contains { $0.message.hasPrefix(message) && $0.line == line }, "\(errors)")
    }

    @Test("a digest value outside many, a digest without a user, and one within variants or pushes are refused")
    func refusedElsewhere() {
        let outside = loadErrors("version: 1\nevents:\n  e:\n    target: {user: {field: /u}}\n    body: {key: b, args: [{digest: count}]}\n")
        #expect(outside.contains { $0.message.hasPrefix("`{digest: …}` is what a digest window gathered") && $0.line == 5 }, "\(outside)")
        let noUser = loadErrors(
            "version: 1\nevents:\n  e:\n    target: {token: {field: /t}}\n    body: {key: b}\n    digest: {window: 10m}\n    many: {body: {key: m}}\n"
        )
        #expect(noUser.contains { $0.message.hasPrefix("a digest needs a user") && $0.line == 6 }, "\(noUser)")
        let variants = """
            version: 1
            events:
              e:
                target: {user: {field: /u}}
                digest: {window: 10m}
                many: {body: {key: m}}
                variants:
                  - when: {field: /k, equals: a}
                    body: {key: a}
                  - default: true
                    body: {key: b}
            """
        #expect(loadErrors(variants).contains { $0.message.hasPrefix("`digest` does not apply within `variants` yet") }, "\(loadErrors(variants))")
    }
}
