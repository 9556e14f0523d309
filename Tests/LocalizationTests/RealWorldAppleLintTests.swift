import Localization
import MappingLocalization
import Testing

/// The classes of defect (and of false alarm) found in real iOS apps' resources
/// (docs/localization.md, "Real apps"), in fixtures of our own: `Fixtures/realworld-ios`,
/// `.strings` and `.stringsdict` in `ios/`.
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
}
