import Foundation
import TestSupport
import Testing

/// schemas/mapping.schema.json, checked with Python's jsonschema (Draft 2020-12), as an editor would.
@Suite("schemas/mapping.schema.json")
struct SchemaTests {
    static let script = """
        import json, sys, yaml, jsonschema
        schema = json.load(open(sys.argv[1]))
        jsonschema.Draft202012Validator.check_schema(schema)
        v = jsonschema.Draft202012Validator(schema)
        for path in sys.argv[2:]:
            errors = sorted(v.iter_errors(yaml.safe_load(open(path))), key=lambda e: list(e.path))
            print(path, "valid" if not errors else "invalid: " + errors[0].message[:120])
        """

    static func check(_ files: [String]) async throws -> [String] {
        let (status, text) = try await ChildProcess.run(
            "/usr/bin/env", ["python3", "-c", script, repositoryRoot + "/schemas/mapping.schema.json"] + files)
        #expect(status == 0, "\(text)")
        return text.split(separator: "\n").map(String.init)
    }

    @Test("every example mapping validates")
    func examplesValidate() async throws {
        let dir = repositoryRoot + "/examples/mappings"
        let files = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasSuffix(".yaml") }.map { "\(dir)/\($0)" }
        let lines = try await Self.check(files)
        #expect(lines.count == files.count)
        #expect(lines.allSatisfy { $0.hasSuffix(" valid") }, "\(lines)")
    }

    @Test("fid, fids, replace_id, conditions, max_age, variants and digests validate")
    func newFields() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pb-schema-\(UUID().uuidString).yaml").path
        try """
        version: 1
        events:
          a: {target: {fid: {field: /fid}}, body: {key: k}, replace_id: {from: event_id}}
          b: {target: {fids: [f1, f2]}, body: {key: k}, collapse_key: {field: /chat}}
          c: {target: {condition: "'a' in topics && !('b' in topics)"}, body: {key: k}}
          d: {target: {topic: /topics/news}, silent: true, data: {k: v}}
          e: {target: {token: t}, body: {key: k}, max_age: 10m, occurred_at: {field: /at}, too_old: dead-letter, ttl: remaining}
          f: {target: {token: t}, body: {key: k}, max_age: 90, event_time: {field: /ts, unit: s}}
          g: {target: {token: t}, title: Shipped, subtitle: {key: s, args: [{field: /a}], fallback: x}, body: {text: {field: /b, default: y}}}
          h: {target: {token: t}, title: {field: /t}, body: {value: 5}}
          i: {target: {token: t}, body: {key: k}, image: "https://cdn.example.com/a.png", interruption: time-sensitive, relevance: 0.5}
          j: {target: {token: t}, body: {key: k}, image: {field: /img}}
          r: {target: {user: {field: /u}}, body: {key: k}, category: social.chat, critical: false, quiet_hours: {from: "22:00", to: "07:30", outside: skip}}
          r2: {target: {user: {field: /u}}, body: {key: k}, quiet_hours: user}
          dg:
            target: {user: {field: /u}}
            body: {key: k, args: [{field: /a}]}
            digest: {window: 10m, by: [user, {field: /p}], first: now, actors: {field: /a}}
            many: {body: {key: k_many, args: [{digest: count}, {digest: first_actor}]}, badge: {field: /n}}
          k:
            target: {fid: f}
            platforms: [android, ios, web]
            body: {key: k, fallback: Hi}
            badge: {field: /n}
            android: {priority: high, ttl: 1h, visibility: private, event_time: {field: /at, unit: s}, sticky: true, notification_priority: max, data: {x: y}}
            apns: {priority: low, collapse_id: c, sound: {critical: true, name: a.caf, volume: 0.5}, subtitle: {key: s}, analytics_label: ios}
            web: {link: "https://example.com/a", urgency: very-low, topic: a-1, ttl: 10m, require_interaction: true, title: Hi}
          v:
            target: {token: t}
            data: {a: b}
            variants:
              - {name: one, when: {field: /s, equals: 1}, body: {key: k1}, ttl: 2d, data: {c: d}}
              - {when: [{field: /s, one_of: [a, true]}, {field: /p, present: true}], body: {key: k2}, target: {topic: news}}
            unmatched: dead-letter
          l:
            target: {token: t}
            body: {key: k}
            max_age: 10m
            occurred_at: {field: /at}
            variants:
              - {when: {field: /s, present: false}, title: T}
              - {default: true, too_old: dead-letter}
        """.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(try await Self.check([file]).first?.hasSuffix(" valid") == true)
    }

    @Test(
        "files that pushbridge rejects are rejected by the schema too",
        arguments: [
            "version: 1\nevents:\n  e:\n    target: {token: t, topic: x}\n    body: {key: k}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    data: {from: x}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {args: [{field: /x}]}\n",
            "version: 1\nevents:\n  e:\n    target: {token: {field: user}}\n    body: {key: k}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    colour: red\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    silent: true\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    ttl: 3000000\n    body: {key: k}\n",
            "version: 1\nevents:\n  e:\n    target: {fid: \"\"}\n    body: {key: k}\n",
            "version: 1\nevents:\n  e:\n    target: {tokens: []}\n    body: {key: k}\n",
            "version: 1\nevents:\n  e:\n    target: {topic: news flash}\n    body: {key: k}\n",
            "version: 1\nevents:\n  e:\n    target: {condition: news}\n    body: {key: k}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    silent: true\n    android: {channel_id: c}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    silent: true\n    replace_id: {from: event_id}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    ttl: remaining\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    event_time: {field: /at}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {text: Hi, key: k}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {fallback: Hi}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    image: http://a.example/x.png\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    interruption: urgent\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    relevance: 2\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    badge: -1\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    android: {visibility: hidden}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    apns: {sound: {name: a.caf}}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    web: {link: http://a.example/}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    web: {topic: a b}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    silent: true\n    web: {urgency: low}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    silent: true\n    subtitle: S\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    occurred_at: {field: /at}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    max_age: 10m\n    occurred_at: {field: /at}\n    event_time: {field: /at}\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    max_age: 0\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    max_age: 10m\n    too_old: drop\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    max_age: 10m\n    occurred_at: {field: /at, unit: us}\n",
            "version: 1\nevents:\n  e:\n    target: {user: {field: /u}}\n    body: {key: k}\n    digest: {window: 10m, by: [{field: /p}]}\n    many: {body: {key: m}}\n",
            "version: 1\nevents:\n  e:\n    target: {user: {field: /u}}\n    body: {key: k}\n    digest: {window: 10m, first: later}\n    many: {body: {key: m}}\n",
            "version: 1\nevents:\n  e:\n    target: {user: {field: /u}}\n    body: {key: k}\n    digest: {window: 10m}\n    many: {target: {topic: x}}\n",
            "version: 1\nevents:\n  e:\n    target: {user: {field: /u}}\n    body: {key: k}\n    digest: {window: 10m}\n    many: {body: {key: m, args: [{digest: total}]}}\n",
            // per-user rules
            "version: 1\nevents:\n  e:\n    target: {user: {field: /u}}\n    body: {key: k}\n    category: Social\n",
            "version: 1\nevents:\n  e:\n    target: {user: {field: /u}}\n    body: {key: k}\n    quiet_hours: {from: \"22:00\", to: \"7:30\"}\n",
            "version: 1\nevents:\n  e:\n    target: {user: {field: /u}}\n    body: {key: k}\n    quiet_hours: {from: \"22:00\", to: \"07:30\", outside: later}\n",
            "version: 1\nevents:\n  e:\n    target: {user: {field: /u}}\n    body: {key: k}\n    critical: yes please\n",
            // variants
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    variants: [{when: {field: /s, equals: a}}]\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    variants: [{default: true}]\n    unmatched: skip\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    variants: []\n    unmatched: skip\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    variants: [{when: {field: /s, equals: a}}]\n    unmatched: drop\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    variants: [{body: {key: k2}}]\n    unmatched: skip\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    variants: [{when: {field: /s, equals: a, present: true}}]\n    unmatched: skip\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    variants: [{when: {field: s, equals: a}}]\n    unmatched: skip\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    variants: [{when: {field: /s, equals: [a]}}]\n    unmatched: skip\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    max_age: 1m\n    variants: [{when: {field: /s, equals: a}, occurred_at: {field: /at}}]\n    unmatched: skip\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    variants: [{when: {field: /s, equals: a}, ttl: forever}]\n    unmatched: skip\n",
            "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    unmatched: skip\n",
        ])
    func invalidRejected(yaml: String) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pb-schema-\(UUID().uuidString).yaml").path
        try yaml.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let lines = try await Self.check([file])
        #expect(lines.first?.contains("invalid") == true, "\(lines)")
    }
}
