import Localization
import MappingLocalization
import Testing

/// The classes of defect found in real apps' resources (docs/localization.md, "Real apps"), in
/// a fixture of our own: `Fixtures/realworld`, Android resources only.
@Suite("lint on what real apps' resources hold")
struct RealWorldLintTests {
    static let dir = "\(fixtures)/realworld"

    static func report() throws -> LintReport {
        let set = try mappingSet("\(dir)/mappings.yaml")
        return Linter.lint(uses: LocKeyUses.uses(set), catalogs: [ResourceCatalog.loadAndroid(directories: ["\(dir)/android/res"])])
    }

    @Test("what aapt2 refuses is an error at its file:line, whether a mapping sends the string or not; an unmatched quote a warning")
    func aapt2() throws {
        let found = try Self.report().findings.filter { $0.rule == .androidBuild }
        let res = "\(Self.dir)/android/res"
        #expect(
            found.map { "\($0.severity.rawValue) \($0.resource?.description ?? "")" } == [
                "error \(res)/values-de/strings.xml:5",  // translatable="nein"
                "warning \(res)/values-de/strings.xml:6",  // Sie sagte "zugestellt
                "error \(res)/values-de/strings.xml:7",  // \u21g2
                "error \(res)/values-fr/strings.xml:9",  // d'articles, on the value's second line
            ])
        #expect(found[0].message.contains("invalid value for 'translatable'. Must be a boolean"))
        #expect(found[1].message.contains("double quote with no closing one"))
        #expect(found[2].message.contains("invalid unicode escape sequence in string"))
        #expect(found[3].message.hasPrefix("basket_body: an apostrophe outside double quotes"))
        #expect(found[3].message.contains("unescaped apostrophe in string"))
        #expect(found.allSatisfy { $0.platform == .android })
        // The key and the locale the message names, for CI (--format json).
        #expect(found.map { "\($0.key ?? "-") \($0.locale ?? "-")" } == ["sale_body de", "delivered_body de", "basket_body de", "basket_body fr"])
    }

    @Test(
        "an @string/ alias is resolved per locale, as the device does; translatable=\"false\" strings and files, and *donottranslate* files, need no translation"
    )
    func aliases() throws {
        let r = try Self.report()
        let missing = r.findings.filter { $0.rule == .missingLocale }
        // app_name → @string/app_name_prod is translated everywhere; support_email is in
        // donottranslate.xml, test_channel in a <resources translatable="false"> file;
        // welcome_title → @string/brand_welcome lacks only German.
        #expect(missing.map { "\($0.key ?? "") \($0.locale ?? "")" } == ["welcome_title de"])
        #expect(
            missing.first?.message
                == "welcome_title (via @string/brand_welcome) is not translated for de: Android falls back to the default string there")
        let de = try #require(r.coverage.first { $0.locale == "de" })
        let fr = try #require(r.coverage.first { $0.locale == "fr" })
        #expect((de.present, de.total) == (7, 8))
        #expect((fr.present, fr.total) == (8, 8))
    }

    @Test("a string only in values-xx crashes the app on devices in every other language")
    func onlyInTranslations() throws {
        let r = try Self.report()
        let f = try #require(r.matching(.missingDefault, .android, key: "delivered_body").first)
        #expect(f.severity == .error)
        #expect(f.resource == SourceLocation(file: "\(Self.dir)/android/res/values-de/strings.xml", line: 6))
        #expect(f.message.contains("only in the resources for de, fr"))
        #expect(f.message.contains("getString throws Resources.NotFoundException, which FCM does not catch"))
    }

    @Test("%% in a translation of a string sent without args shows twice, in that locale")
    func percentInTranslation() throws {
        let r = try Self.report()
        let f = r.findings.filter { $0.rule == .argumentCount }
        #expect(f.map { "\($0.key ?? "") \($0.locale ?? "-")" } == ["sale_body tr"])
        #expect(f.first?.severity == .warning)
        #expect(f.first?.resource == SourceLocation(file: "\(Self.dir)/android/res/values-tr/strings.xml", line: 6))
    }

    @Test("nothing else: quoted apostrophes, \\' and the rest are fine")
    func nothingElse() throws {
        let r = try Self.report()
        #expect(Set(r.findings.map(\.rule)) == [.androidBuild, .missingLocale, .missingDefault, .argumentCount])
        #expect(r.summary == "4 errors, 3 warnings; coverage android: en 87% (7/8), de 87% (7/8), fr 100%, tr 87% (7/8)")
    }
}
