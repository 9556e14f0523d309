import Foundation
import Localization
import Mapping
import MappingLocalization
import TestSupport
import Testing

/// Tests/LocalizationTests/Fixtures, by path.
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures").path

/// The repository root (examples/).
let repositoryRoot = Repository.root

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

/// UTF-16 bytes with a byte order mark.
func utf16(_ text: String, littleEndian: Bool) -> [UInt8] {
    var out: [UInt8] = littleEndian ? [0xFF, 0xFE] : [0xFE, 0xFF]
    for unit in text.utf16 {
        let hi = UInt8(unit >> 8)
        let lo = UInt8(unit & 0xFF)
        out += littleEndian ? [lo, hi] : [hi, lo]
    }
    return out
}

/// Loads mapping files (a file or a directory of *.yaml).
func mappingSet(_ path: String) throws -> MappingSet {
    try MappingSet.load(files: MappingFiles.read([path]))
}

/// Lints a fixture directory that holds mappings.yaml, android/res and ios.
func lintFixture(_ name: String) throws -> LintReport {
    let dir = "\(fixtures)/\(name)"
    let set = try mappingSet("\(dir)/mappings.yaml")
    let catalogs = [
        ResourceCatalog.loadAndroid(directories: ["\(dir)/android/res"]),
        ResourceCatalog.loadApple(paths: ["\(dir)/ios"]),
    ]
    return Linter.lint(uses: LocKeyUses.uses(set), catalogs: catalogs)
}

/// The example resources shipped in examples/resources.
func exampleCatalogs() -> [ResourceCatalog] {
    [
        ResourceCatalog.loadAndroid(directories: ["\(repositoryRoot)/examples/resources/android/res"]),
        ResourceCatalog.loadApple(paths: ["\(repositoryRoot)/examples/resources/ios"]),
    ]
}

extension LintReport {
    /// Findings matching a rule, platform and (optionally) key and locale.
    func matching(_ rule: Finding.Rule, _ platform: DevicePlatform, key: String? = nil, locale: String?? = .none) -> [Finding] {
        findings.filter { f in
            f.rule == rule && f.platform == platform && (key == nil || f.key == key)
                && { if case .some(let l) = locale { return f.locale == l } else { return true } }()
        }
    }
}
