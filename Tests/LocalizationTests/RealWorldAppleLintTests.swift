import Localization
import MappingLocalization
import Testing

/// The classes of defect (and of false alarm) found in real iOS apps' resources
/// (docs/localization.md, "Real apps"), in fixtures of our own: `Fixtures/realworld-ios`,
/// `.strings` and `.stringsdict` in `ios/`, a String Catalog in `catalog/`.
@Suite("lint on what real iOS apps' resources hold")
struct RealWorldAppleLintTests {
    static let dir = "\(fixtures)/realworld-ios"

    static func report(_ mappings: String, _ resources: String) throws -> LintReport {
        let set = try mappingSet("\(dir)/\(mappings)")
        return Linter.lint(uses: LocKeyUses.uses(set), catalogs: [ResourceCatalog.loadApple(paths: ["\(dir)/\(resources)"])])
    }

    @Test("a .stringsdict device rule beside the same key in its .strings is no duplicate: the rule is shown, as for a plural rule")
    func deviceRuleOverridesStrings() throws {
        let catalog = ResourceCatalog.loadApple(paths: ["\(Self.dir)/ios"])
        #expect(catalog.problems == [])
        let en = try #require(catalog.defaultTable.entries["OPEN_HINT_BODY"])
        #expect(en.value == "Open the app on your iPhone to reply.")
        #expect(en.location == SourceLocation(file: "\(Self.dir)/ios/en.lproj/Localizable.stringsdict", line: 5))
        #expect(catalog.tables["de"]?.entries["OPEN_HINT_BODY"]?.value == "Öffne die App auf deinem iPhone, um zu antworten.")
        #expect(catalog.tables["ja"]?.entries["OPEN_HINT_BODY"]?.value == "アプリを開いて返信してください。")  // .strings only
        let r = try Self.report("strings.yaml", "ios")
        #expect(r.findings.filter { $0.key == "OPEN_HINT_BODY" || $0.rule == .parseError } == [])
    }

    @Test("%2@ without a $ is a field width: the args go in order, so the names swap (error); in order by chance, a warning")
    func widthReadAsIndex() throws {
        let r = try Self.report("strings.yaml", "ios")
        let found = r.findings.filter { $0.rule == .iosSpecifier }
        #expect(
            found.map { "\($0.severity.rawValue) \($0.key ?? "") \($0.locale ?? "-") \($0.resource?.line ?? 0)" } == [
                "error MEMBER_ADDED_BODY de 2",
                "error MEMBER_ADDED_BODY de 2",
                "warning REPLY_TITLE - 4",
            ])
        #expect(
            found[0].message
                == "%2@ in MEMBER_ADDED_BODY (de) shows arg 1, not arg 2: without a $, 2 is a field width, not an argument number (IEEE printf, which String(format:) follows), so the args are taken in the order written; write %2$@"
        )
        #expect(found[1].message.hasPrefix("%1@ in MEMBER_ADDED_BODY (de) shows arg 2, not arg 1:"))
        #expect(found[2].message.hasPrefix("%1@ in REPLY_TITLE shows arg 1 only because it comes first:"))
        #expect(found[2].message.contains("a translation that reorders them shows the wrong one; write %1$@"))
        #expect(r.summary == "2 errors, 1 warning; coverage ios: en 100%, de 100%, ja 100%")
    }

    @Test("preview shows %2@ as the device does: the args in order, unpadded, and says why")
    func previewWidthReadAsIndex() {
        let catalog = ResourceCatalog.loadApple(paths: ["\(Self.dir)/ios"])
        let text = LocalizedPush.Text(key: "MEMBER_ADDED_BODY", args: ["Ann", "Bob"])
        let de = Previewer.render(text, field: .body, locale: "de", catalog: catalog)
        #expect(de.outcome == .text("Ann wurde von Bob zur Gruppe hinzugefügt."))  // meant: Bob was added by Ann
        #expect(
            de.note
                == "%2@ shows arg 1, not 2: without a $ the number is a field width; %1@ shows arg 2, not 1: without a $ the number is a field width")
        let en = Previewer.render(text, field: .body, locale: "en", catalog: catalog)
        #expect(en.outcome == .text("Ann added Bob to the group."))
        #expect(en.note == nil)
        let ja = Previewer.render(text, field: .body, locale: "ja", catalog: catalog)
        #expect(ja.outcome == .text("AnnさんがBobさんをグループに追加しました。"))
        // In order by chance: the right text, no note.
        let reply = Previewer.render(.init(key: "REPLY_TITLE", args: ["Ann"]), field: .title, locale: "en", catalog: catalog)
        #expect(reply.outcome == .text("Ann replied"))
        #expect(reply.note == nil)
    }

    @Test("a String Catalog key added by hand with no source-language value shows as the raw key: an error; an extracted key is its own text")
    func manualKeyWithoutSource() throws {
        let catalog = ResourceCatalog.loadApple(paths: ["\(Self.dir)/catalog"])
        let file = "\(Self.dir)/catalog/Localizable.xcstrings"
        #expect(catalog.defaultTable.entries["%@"]?.value == "%@")
        #expect(catalog.defaultTable.entries["INVITE_TITLE"] == nil)
        #expect(
            catalog.manualKeysWithoutSource == [
                "GROUP_RENAMED_TITLE": SourceLocation(file: file, line: 7), "INVITE_TITLE": SourceLocation(file: file, line: 33),
            ])
        let r = try Self.report("catalog.yaml", "catalog")
        #expect(
            r.findings.map { "\($0.rule.rawValue) \($0.severity.rawValue) \($0.key ?? "") \($0.resource?.line ?? 0)" } == [
                "missing-default error GROUP_RENAMED_TITLE 7",
                "missing-default error INVITE_TITLE 33",
            ])
        #expect(
            r.findings[1].message
                == "INVITE_TITLE was added to the String Catalog by hand (extractionState \"manual\") and has no en value (only de, ja have one): a manual key is a name, not text, so devices in en and in every language without a value show the raw key \"INVITE_TITLE\" as the title; write its en text"
        )
        #expect(r.findings[0].message.contains("has no en value (no language has one)"))
        #expect(r.summary == "2 errors, 0 warnings; coverage ios: en 50% (2/4), de 75% (3/4), ja 75% (3/4)")
    }

    @Test("preview shows the manual key raw where no table has its text, as the device does")
    func previewManualKey() {
        let catalog = ResourceCatalog.loadApple(paths: ["\(Self.dir)/catalog"])
        let en = Previewer.render(.init(key: "INVITE_TITLE", args: nil), field: .title, locale: "en", catalog: catalog)
        #expect(en.outcome == .text("INVITE_TITLE"))
        #expect(en.note == "INVITE_TITLE not found in en: iOS shows the key")
        let de = Previewer.render(.init(key: "INVITE_TITLE", args: nil), field: .title, locale: "de", catalog: catalog)
        #expect(de.outcome == .text("Neue Einladung"))
        let extracted = Previewer.render(.init(key: "%@", args: ["Ann joined"]), field: .body, locale: "en", catalog: catalog)
        #expect(extracted.outcome == .text("Ann joined"))
    }
}
