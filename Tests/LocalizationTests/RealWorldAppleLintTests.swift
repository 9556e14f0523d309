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
}
