import Foundation
import TestSupport
import Testing

@Suite("pushbridge lint / preview (the built binary)", .serialized)
struct LintCLITests {
    static let examples = ["--mappings", "examples/mappings", "--android-res", "examples/resources/android/res", "--ios", "examples/resources/ios"]
    static let clean = "Tests/LocalizationTests/Fixtures/clean"

    @Test("lint reports the docs' %1$d as an error in compiler style and exits 1")
    func lintExamples() async throws {
        let r = try await runPushbridge(["lint"] + Self.examples)
        #expect(r.status == 1, "\(r.err)")
        #expect(r.out.hasPrefix("examples/resources/android/res/values/strings.xml:9: error: %1$d in new_message_body receives a string loc arg"))
        #expect(r.out.contains("\nexamples/mappings/fcm-docs.yaml:20: note: sent as the body of message.received with 2 args\n"))
        #expect(r.out.contains("[android-specifier]"))
        #expect(
            r.out.hasSuffix(
                "8 errors, 0 warnings; coverage android: en 100%, ar 100%, de 100%, es 100%, fr 100%, id 100%, it 100%, tr 100%; ios: en 100%, ar 100%, de 100%, es 100%, fr 100%, id 100%, it 100%, tr 100%\n"
            ))
    }

    @Test("lint of the clean fixture: no findings, exit 0")
    func lintClean() async throws {
        let r = try await runPushbridge([
            "lint", "--mappings", "\(Self.clean)/mappings.yaml", "--android-res", "\(Self.clean)/android/res", "--ios", "\(Self.clean)/ios",
        ])
        #expect(r.status == 0, "\(r.out)\(r.err)")
        #expect(r.out == "0 errors, 0 warnings; coverage android: en 100%, fr 100%, sr-Latn 100%; ios: en 100%, fr 100%, sr-Latn 100%\n")
    }

    @Test("warnings alone exit 0")
    func warningsOnly() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pb-lint-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for (path, text) in [
            ("m.yaml", "version: 1\nevents:\n  e:\n    target: {topic: t}\n    platforms: [android]\n    body: {key: hello_body}\n"),
            ("res/values/strings.xml", #"<resources><string name="hello_body">Hello</string></resources>"#),
            ("res/values-fr/strings.xml", #"<resources><string name="other">Autre</string></resources>"#),
        ] {
            let url = URL(fileURLWithPath: "\(dir)/\(path)")
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        let r = try await runPushbridge(["lint", "--mappings", "\(dir)/m.yaml", "--android-res", "\(dir)/res"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.contains("\(dir)/res/values/strings.xml:1: warning: hello_body is not translated for fr"))
        #expect(r.out.hasSuffix("0 errors, 1 warning; coverage android: en 100%, fr 0% (0/1)\n"))
    }

    @Test("lint --format json for CI")
    func json() async throws {
        let r = try await runPushbridge(["lint"] + Self.examples + ["--format", "json"])
        #expect(r.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        #expect(object["errors"] as? Int == 8)
        #expect(object["warnings"] as? Int == 0)
        let findings = try #require(object["findings"] as? [[String: Any]])
        #expect(findings.count == 8)
        let first = try #require(findings.first)
        #expect(first["rule"] as? String == "android-specifier")
        #expect(first["severity"] as? String == "error")
        #expect(first["platform"] as? String == "android")
        #expect(first["key"] as? String == "new_message_body")
        #expect((first["resource"] as? [String: Any])?["line"] as? Int == 9)
        let use = try #require((first["uses"] as? [[String: Any]])?.first)
        #expect(use["eventType"] as? String == "message.received")
        #expect((use["location"] as? [String: Any])?["file"] as? String == "examples/mappings/fcm-docs.yaml")
        #expect((object["coverage"] as? [Any])?.count == 16)
    }

    @Test("lint --format json: an aapt2 finding names its key and locale, as its message does")
    func jsonResourceProblem() async throws {
        let dir = "Tests/LocalizationTests/Fixtures/realworld"
        let r = try await runPushbridge([
            "lint", "--mappings", "\(dir)/mappings.yaml", "--android-res", "\(dir)/android/res", "--format", "json",
        ])
        #expect(r.status == 1, "\(r.err)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
        let findings = try #require(object["findings"] as? [[String: Any]])
        let apostrophe = try #require(findings.first { ($0["message"] as? String)?.contains("unescaped apostrophe") == true })
        #expect(apostrophe["rule"] as? String == "aapt2")
        #expect(apostrophe["key"] as? String == "basket_body")
        #expect(apostrophe["locale"] as? String == "fr")
        #expect((apostrophe["resource"] as? [String: Any])?["file"] as? String == "\(dir)/android/res/values-fr/strings.xml")
    }

    @Test("lint needs resources, and reports unreadable ones")
    func usage() async throws {
        let none = try await runPushbridge(["lint", "--mappings", "examples/mappings"])
        #expect(none.status == 64)
        #expect(none.err.contains("give --android-res and/or --ios"))
        let broken = try await runPushbridge(["lint", "--mappings", "examples/mappings", "--ios", "Tests/LocalizationTests/Fixtures/broken/ios"])
        #expect(broken.status == 1)
        #expect(
            broken.out.hasPrefix(
                "Tests/LocalizationTests/Fixtures/broken/ios/en.lproj/Localizable.strings:3: error: expected ; after the value of \"BAD\" [parse-error]\n"
            ))
    }

    @Test("preview prints the table, with the crash where Android would crash")
    func preview() async throws {
        let r = try await runPushbridge(
            ["preview"] + Self.examples + ["--event", "examples/events/new-message.json", "--locale", "en,ar", "--locale", "tr"])
        #expect(r.status == 0, "\(r.err)")
        #expect(
            r.out == """
                message.received (examples/mappings/fcm-docs.yaml:20): 1 message
                locale | platform | field | key              | args         | final text
                -------|----------|-------|------------------|--------------|-----------
                en     | android  | body  | new_message_body | ["3", "Bob"] | ✗ Android: IllegalFormatConversionException (d != java.lang.String) — app crashes in background
                en     | ios      | body  | NEW_MESSAGE_BODY | ["3", "Bob"] | 3 new messages from Bob
                ar     | android  | body  | new_message_body | ["3", "Bob"] | ✗ Android: IllegalFormatConversionException (d != java.lang.String) — app crashes in background
                ar     | ios      | body  | NEW_MESSAGE_BODY | ["3", "Bob"] | 3 رسائل جديدة من Bob
                tr     | android  | body  | new_message_body | ["3", "Bob"] | ✗ Android: IllegalFormatConversionException (d != java.lang.String) — app crashes in background
                tr     | ios      | body  | NEW_MESSAGE_BODY | ["3", "Bob"] | Bob size 3 yeni mesaj gönderdi

                """)
    }

    @Test("preview of a Live Activity update: its content state, and its alert on iOS")
    func previewLiveActivity() async throws {
        let r = try await runPushbridge(
            ["preview"] + Self.examples + ["--event", "examples/events/activity-o-81.2-picked-up.json", "--locale", "en,fr"])
        #expect(r.status == 0, "\(r.err)")
        #expect(
            r.out == """
                order.picked_up (examples/mappings/activities.yaml:29): 1 message
                Live Activity o-81: update, content-state {"courier":"Ana","eta":817674000,"progress":0.6,"status":"picked_up"}
                locale | platform | field | key                   | args    | final text
                -------|----------|-------|-----------------------|---------|-----------
                en     | ios      | title | ORDER_PICKED_UP_TITLE | ["Ana"] | Ana picked up your order.
                fr     | ios      | title | ORDER_PICKED_UP_TITLE | ["Ana"] | Ana a récupéré votre commande.

                """, "\(r.out)")
    }

    @Test("preview: every locale by default; a silent push; an event that cannot render exits 2")
    func previewMore() async throws {
        let all = try await runPushbridge(["preview"] + Self.examples + ["--event", "examples/events/welcome.json"])
        #expect(all.status == 0)
        #expect(all.out.components(separatedBy: "\n").filter { $0.contains("welcome_title") || $0.contains("WELCOME_TITLE") }.count == 16)
        #expect(all.out.contains("de     | android  | title | welcome_title | [\"Alice\"] | Willkommen, Alice!\n"))
        let silent = try await runPushbridge(["preview"] + Self.examples + ["--event", "examples/events/inbox-sync.json"])
        #expect(silent.out.hasSuffix("no visible text: a silent (data-only) push\n"))
        let fail = try await runPushbridge(["preview"] + Self.examples + ["--event", "examples/events/does-not-exist.json"])
        #expect(fail.status == 64)
        let iosOnly = try await runPushbridge([
            "preview", "--mappings", "examples/mappings", "--ios", "examples/resources/ios",
            "--event", "examples/events/welcome.json", "--locale", "fr",
        ])
        #expect(iosOnly.out.contains("fr     | ios      | title | WELCOME_TITLE | [\"Alice\"] | Bienvenue, Alice !\n"))
        #expect(!iosOnly.out.contains("android"))
    }

    @Test("--help teaches with examples")
    func help() async throws {
        let lint = try await runPushbridge(["lint", "--help"])
        #expect(lint.out.contains("  pushbridge lint --mappings examples/mappings \\\n      --android-res examples/resources/android/res \\\n"))
        #expect(lint.out.contains("IllegalFormatConversionException"))
        let preview = try await runPushbridge(["preview", "--help"])
        #expect(preview.out.contains("  pushbridge preview --mappings examples/mappings \\\n      --event examples/events/welcome.json \\\n"))
        let top = try await runPushbridge(["--help"])
        #expect(top.out.contains("lint"))
        #expect(top.out.contains("preview"))
    }
}
