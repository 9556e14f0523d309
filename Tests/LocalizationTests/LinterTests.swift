import Localization
import MappingLocalization
import Testing

@Suite("lint: every defect class on each platform")
struct LinterTests {
    @Test("the clean fixture (a fid target and a topic) has no findings and full coverage")
    func clean() throws {
        let report = try lintFixture("clean")
        #expect(report.findings == [])
        #expect(report.coverage.allSatisfy { $0.present == $0.total && $0.total == 3 })  // the fid mapping's 2 keys and the topic's 1
        #expect(report.summary == "0 errors, 0 warnings; coverage android: en 100%, fr 100%, sr-Latn 100%; ios: en 100%, fr 100%, sr-Latn 100%")
    }

    @Test("FCM's docs example: %1$d fed a string loc arg is an error, naming the crash")
    func docsExample() throws {
        let set = try mappingSet("\(repositoryRoot)/examples/mappings")
        let report = Linter.lint(uses: LocKeyUses.uses(set), catalogs: exampleCatalogs())
        let hazards = report.matching(.androidSpecifier, .android, key: "new_message_body")
        #expect(hazards.count == 8)  // the default and all seven translations keep %1$d
        let first = try #require(hazards.first { $0.locale == nil })
        #expect(first.severity == .error)
        #expect(first.resource == SourceLocation(file: "\(repositoryRoot)/examples/resources/android/res/values/strings.xml", line: 9))
        #expect(first.message.contains("IllegalFormatConversionException (d != java.lang.String)"))
        #expect(first.message.contains("the app crashes"))
        #expect(first.uses.map(\.eventType) == ["message.received"])
        #expect(first.uses.first?.location.file.hasSuffix("examples/mappings/fcm-docs.yaml") == true)
        #expect(report.errorCount == 8)
        #expect(report.warningCount == 0)
        #expect(report.coverage.count == 16)
        #expect(report.coverage.allSatisfy { $0.percent == 100 })
    }

    @Test("defects: missing from the default resources is an error on both platforms")
    func missingDefault() throws {
        let r = try lintFixture("defects")
        for (p, key) in [(DevicePlatform.android, "nowhere_body"), (.ios, "NOWHERE_BODY")] {
            let f = try #require(r.matching(.missingDefault, p, key: key).first)
            #expect(f.severity == .error)
            #expect(f.uses.first?.location.line == 4)
        }
        #expect(r.matching(.missingDefault, .ios, key: "NOWHERE_BODY").first?.message.contains(#"iOS shows the key itself, "NOWHERE_BODY""#) == true)
    }

    @Test("defects: missing in a locale is a warning, with coverage")
    func missingLocale() throws {
        let r = try lintFixture("defects")
        for (p, key) in [(DevicePlatform.android, "only_default_body"), (.ios, "ONLY_DEFAULT_BODY")] {
            let f = try #require(r.matching(.missingLocale, p, key: key, locale: "fr").first)
            #expect(f.severity == .warning)
        }
        let fr = try #require(r.coverage.first { $0.platform == .android && $0.locale == "fr" })
        #expect(fr.total == 11)
        #expect(fr.present == 7)
    }

    @Test("defects: too few args is an error, too many a warning, none for a placeholder an error")
    func argumentCount() throws {
        let r = try lintFixture("defects")
        for p in DevicePlatform.allCases {
            let few = r.matching(.argumentCount, p, key: p == .android ? "two_args_body" : "TWO_ARGS_BODY")
            #expect(few.map(\.severity) == [.error])
            #expect(few.first?.message.contains("needs 2 args but the mapping sends 1") == true)
            let many = r.matching(.argumentCount, p, key: p == .android ? "one_arg_body" : "ONE_ARG_BODY")
            #expect(many.map(\.severity) == [.warning])
            let none = r.matching(.argumentCount, p, key: p == .android ? "needs_arg_title" : "NEEDS_ARG_TITLE")
            #expect(none.map(\.severity) == [.error])
            #expect(none.first?.message.contains("shows \(p == .android ? "%1$s" : "%@") as is") == true)
        }
        #expect(r.matching(.argumentCount, .android, key: "two_args_body").first?.message.contains("MissingFormatArgumentException") == true)
    }

    @Test("defects: Android %d with a string arg (default and translation), and %s without index")
    func androidSpecifiers() throws {
        let r = try lintFixture("defects")
        let hazards = r.matching(.androidSpecifier, .android, key: "count_body")
        #expect(hazards.map(\.locale) == [nil, "fr"])
        #expect(hazards.allSatisfy { $0.severity == .error && $0.message.contains("IllegalFormatConversionException") })
        let loose = r.matching(.androidNonPositional, .android, key: "loose_body")
        #expect(loose.map(\.locale) == [nil, "fr"])
        #expect(loose.first?.message.contains("translations reorder words") == true)
        #expect(r.matching(.androidNonPositional, .ios).isEmpty)
    }

    @Test("defects: iOS %ld with a string arg is an error")
    func iosSpecifiers() throws {
        let r = try lintFixture("defects")
        let hazards = r.matching(.iosSpecifier, .ios, key: "COUNT_BODY")
        #expect(hazards.map(\.locale) == [nil, "fr"])
        #expect(hazards.first?.message.contains("%ld in COUNT_BODY receives a string loc arg: undefined behaviour") == true)
        #expect(hazards.first?.resource?.line == 5)
    }

    @Test("defects: a translation with other specifiers than its default string")
    func translationMismatch() throws {
        let r = try lintFixture("defects")
        for (p, key, extra) in [(DevicePlatform.android, "mismatch_body", "%3$s"), (.ios, "MISMATCH_BODY", "%3$@")] {
            let f = try #require(r.matching(.translationMismatch, p, key: key, locale: "fr").first)
            #expect(f.severity == .error)
            #expect(f.message.contains("uses \(extra) which the default string does not"))
        }
    }

    @Test("a translation that only drops a specifier is a warning")
    func droppedSpecifier() {
        let android = ResourceCatalog.android(files: [
            ("values/strings.xml", bytes(#"<resources><string name="k">%1$s and %2$s</string></resources>"#)),
            ("values-de/strings.xml", bytes(#"<resources><string name="k">nur %1$s</string></resources>"#)),
        ])
        let use = KeyUse(
            platform: .android, key: "k", argumentCount: 2, field: .body, eventType: "e", location: SourceLocation(file: "m.yaml", line: 3))
        let r = Linter.lint(uses: [use], catalogs: [android])
        #expect(r.findings.map(\.rule) == [.translationMismatch])
        #expect(r.findings.first?.severity == .warning)
        #expect(r.findings.first?.message.contains("drops %2$s") == true)
    }

    @Test("defects: plurals (<plurals>, .stringsdict) and a string-array are reported")
    func pluralsAndArrays() throws {
        let r = try lintFixture("defects")
        #expect(r.matching(.plural, .android, key: "items_plural").first?.message.contains("<plurals>") == true)
        #expect(r.matching(.plural, .ios, key: "ITEMS_PLURAL").first?.message.contains(".stringsdict plural") == true)
        #expect(r.matching(.plural, .ios, key: "ITEMS_PLURAL").first?.resource?.file.hasSuffix("Localizable.stringsdict") == true)
        #expect(r.matching(.stringArray, .android, key: "choices").map(\.severity) == [.error])
    }

    @Test("defects: a key on one platform whose counterpart exists nowhere on the other")
    func crossPlatform() throws {
        let r = try lintFixture("defects")
        let f = try #require(r.matching(.crossPlatform, .ios, key: "ANDROID_ONLY_BODY").first)
        #expect(f.severity == .error)
        #expect(f.message.contains("Android counterpart android_only_body does"))
        #expect(r.matching(.missingDefault, .ios, key: "ANDROID_ONLY_BODY").isEmpty)
        #expect(r.matching(.crossPlatform, .android).isEmpty)
    }

    @Test("defects: the totals and the order (errors first)")
    func totals() throws {
        let r = try lintFixture("defects")
        #expect(r.errorCount == 18)
        #expect(r.warningCount == 4)
        let text = r.text
        #expect(text.hasSuffix("18 errors, 4 warnings; coverage android: en 90% (10/11), fr 63% (7/11); ios: en 80% (8/10), fr 60% (6/10)\n"))
        #expect(text.range(of: ": warning: ")!.lowerBound > text.range(of: ": error: ", options: .backwards)!.lowerBound)
    }

    @Test("String Catalogs: plural variations, review states, untranslatable keys")
    func stringCatalog() {
        let catalog = ResourceCatalog.loadApple(paths: ["\(fixtures)/catalog"])
        let at = SourceLocation(file: "m.yaml", line: 1)
        let uses = [
            KeyUse(platform: .ios, key: "ITEMS_BODY", argumentCount: 1, field: .body, eventType: "items", location: at),
            KeyUse(platform: .ios, key: "DEVICE_BODY", argumentCount: 1, field: .body, eventType: "device", location: at),
            KeyUse(platform: .ios, key: "BRAND_TITLE", argumentCount: 0, field: .title, eventType: "brand", location: at),
            KeyUse(platform: .ios, key: "GREETING_TITLE", argumentCount: 1, field: .title, eventType: "greet", location: at),
        ]
        let r = Linter.lint(uses: uses, catalogs: [catalog])
        #expect(r.findings.map(\.rule) == [.plural, .translationState])
        #expect(r.findings[0].message.contains("a String Catalog plural variation"))
        #expect(r.findings[1].locale == "fr")
        #expect(r.findings[1].message.contains("needs_review"))
    }

    @Test("no args: %% shows twice on Android; a literal percent is not a placeholder")
    func noArguments() {
        let android = ResourceCatalog.android(files: [
            ("values/strings.xml", bytes(#"<resources><string name="a">100%% sure</string><string name="b">100% free</string></resources>"#))
        ])
        let at = SourceLocation(file: "m.yaml", line: 1)
        let r = Linter.lint(
            uses: [
                KeyUse(platform: .android, key: "a", argumentCount: 0, field: .body, eventType: "e", location: at),
                KeyUse(platform: .android, key: "b", argumentCount: 0, field: .body, eventType: "e", location: at),
            ],
            catalogs: [android])
        #expect(r.findings.map(\.key) == ["a"])
        #expect(r.findings.first?.severity == .warning)
    }

    @Test(
        "no args: a placeholder is one error, at the default string, naming the translations that show it too; one only a translation has is a mismatch"
    )
    func placeholderWithoutArguments() throws {
        let r = try lintFixture("defects")
        for (p, key) in [(DevicePlatform.android, "needs_arg_title"), (.ios, "NEEDS_ARG_TITLE")] {
            let f = r.matching(.argumentCount, p, key: key)
            #expect(f.map(\.locale) == [nil])
            #expect(f.first?.message.hasSuffix("as is; so does the fr translation") == true)
        }
        var files = [("values/strings.xml", bytes(#"<resources><string name="a">Hi %1$s</string><string name="b">Hello</string></resources>"#))]
        for locale in ["de", "es", "fr", "it", "ja", "pt"] {
            files.append(("values-\(locale)/strings.xml", bytes(#"<resources><string name="a">%1$s!</string></resources>"#)))
        }
        files.append(("values-nl/strings.xml", bytes(#"<resources><string name="a">Hallo</string><string name="b">Hallo %1$s</string></resources>"#)))
        let at = SourceLocation(file: "m.yaml", line: 1)
        let many = Linter.lint(
            uses: ["a", "b"].map { KeyUse(platform: .android, key: $0, argumentCount: 0, field: .body, eventType: "e", location: at) },
            catalogs: [ResourceCatalog.android(files: files)])
        #expect(
            many.findings.map { "\($0.rule.rawValue) \($0.severity.rawValue) \($0.key ?? "") \($0.locale ?? "-")" } == [
                "arg-count error a -", "translation-mismatch warning a nl", "missing-locale warning b de", "missing-locale warning b es",
                "missing-locale warning b fr", "missing-locale warning b it", "missing-locale warning b ja", "translation-mismatch error b nl",
                "missing-locale warning b pt",
            ])
        #expect(many.findings[0].message.hasSuffix("shows %1$s as is; so do 6 translations (de, es, fr, it, ja, …)"))
        #expect(many.findings[7].message.hasPrefix("b in nl uses %1$s which the default string does not"))
    }

    @Test("parse-error and aapt2 findings name the key and the locale wherever they are known")
    func problemKeysAndLocales() {
        let android = ResourceCatalog.android(files: [
            ("values/strings.xml", bytes(#"<resources><string name="a">It's</string></resources>"#)),
            ("values-fr/strings.xml", bytes(#"<resources><string name="b">Un</string><string name="b">Deux</string></resources>"#)),
            ("values-de/strings.xml", bytes("<resources>")),
        ])
        let ios = ResourceCatalog.apple(files: [
            ("en.lproj/Localizable.strings", bytes(#""A" = "One"; "A" = "Two";"#)),
            ("fr.lproj/Localizable.strings", bytes(#""B" = "Un";"#)),
            ("more/fr.lproj/Localizable.strings", bytes(#""B" = "Deux";"#)),
            ("Localizable.xcstrings", bytes(#"{"sourceLanguage": "en", "strings": {"C": {"localizations": {"en": {}, "de": {}}}}}"#)),
        ])
        let r = Linter.lint(uses: [], catalogs: [android, ios])
        #expect(
            r.findings.map { "\($0.rule.rawValue) \($0.key ?? "-") \($0.locale ?? "-")" } == [
                "aapt2 a -", "parse-error b fr", "parse-error - de",
                "parse-error A -", "parse-error C de", "parse-error C -", "parse-error B fr",
            ])
    }

    @Test("a parse error is an error finding at the resource's file:line")
    func parseErrors() throws {
        let set = try mappingSet("\(repositoryRoot)/examples/mappings")
        let r = Linter.lint(uses: LocKeyUses.uses(set), catalogs: [ResourceCatalog.loadApple(paths: ["\(fixtures)/broken/ios"])])
        let parse = r.findings.filter { $0.rule == .parseError }
        #expect(parse.map { $0.primaryLocation?.line } == [3, 6])
        // The key where the problem is in one; the locale, none for the development language's.
        #expect(parse.map(\.key) == ["BAD", nil])
        #expect(parse.map(\.locale) == [nil, "fr"])
        #expect(
            parse.first?.text == "\(fixtures)/broken/ios/en.lproj/Localizable.strings:3: error: expected ; after the value of \"BAD\" [parse-error]")
    }
}
