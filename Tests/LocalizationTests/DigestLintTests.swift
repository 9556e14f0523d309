import Foundation
import Localization
import Mapping
import MappingLocalization
import Testing

/// A digest sends one of two keys by the count (docs/localization.md, *Digests*): `lint` checks
/// both, each at its own line, since Android cannot pick a plural for a key the server sends.
@Suite("lint: a digest's two keys")
struct DigestLintTests {
    @Test("both the single event's key and many's are linted: a missing many key is reported at the line of `many:`")
    func bothKeys() throws {
        let yaml = """
            version: 1
            events:
              comment.created:
                target: {user: {field: /u}}
                digest: {window: 10m}
                body: {key: comment_body, args: [{field: /actor}]}
                many:
                  body: {key: comment_digest_body, args: [{digest: count}, {digest: first_actor}]}
            """
        let set = try MappingSet.load(files: [("m.yaml", yaml)])
        let uses = LocKeyUses.uses(set).filter { $0.platform == .android }
        #expect(uses.map { "\($0.key) \($0.argumentCount) \($0.location.line)" } == ["comment_body 1 3", "comment_digest_body 2 7"])

        let res = FileManager.default.temporaryDirectory.appendingPathComponent("digest-lint-\(UUID().uuidString)/res")
        try FileManager.default.createDirectory(at: res.appendingPathComponent("values"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: res.deletingLastPathComponent()) }
        let strings = """
            <resources>
                <string name="comment_body">%1$s commented</string>
                <string name="comment_digest_body_x">unused</string>
            </resources>
            """
        try strings.write(to: res.appendingPathComponent("values/strings.xml"), atomically: true, encoding: .utf8)
        let report = Linter.lint(uses: uses, catalogs: [ResourceCatalog.loadAndroid(directories: [res.path])])
        let missing = report.findings.filter { $0.rule == .missingDefault }
        #expect(missing.map(\.key) == ["comment_digest_body"], "\(report.findings.map(\.text))")
        #expect(missing.first?.uses.first?.location.line == 7)
    }
}
