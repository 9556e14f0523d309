import ArgumentParser
import Foundation
import Localization
import Mapping
import MappingLocalization

struct LintCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lint",
        abstract: "Check every key the mappings send against the app's string resources.",
        discussion: """
            For each key, platform and locale: is it there (missing from the default \
            resources: error; from a locale: warning), does the mapping send as many args as \
            the string uses, and can the string take them? FCM sends every loc arg as a \
            string: on Android a %1$d given one throws IllegalFormatConversionException, which \
            FCM does not catch, so the app crashes when the push arrives in the background. \
            Only %s / %1$s (Android) and %@ / %1$@ (iOS) are safe. Also reported: plurals and \
            arrays (a loc key cannot select them), translations whose specifiers differ from \
            the default, keys present on one platform only, and, in any Android string, what \
            aapt2 refuses to build (an apostrophe outside double quotes, a bad \\u escape, a \
            translatable="..." that is not true or false). A key only in values-xx/ is an \
            error: devices in other languages crash. @string/ aliases are followed per \
            locale, as the device does; translatable="false" strings and files need no \
            translation.

            Output: FILE:LINE: error|warning: MESSAGE [rule], a note per mapping that sends \
            the key, and a summary with coverage per locale. Exit status 1 if there is an \
            error (warnings alone: 0). Rules and why: docs/localization.md.

            Examples:
              pushbridge lint --mappings examples/mappings \\
                  --android-res examples/resources/android/res \\
                  --ios examples/resources/ios
              pushbridge lint --mappings m.yaml --ios App/Localizable.xcstrings \\
                  --format json
            """
    )

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @OptionGroup var mappings: MappingOptions

    @OptionGroup var resources: ResourceOptions

    @Option(help: "text (compiler style) or json (for CI).")
    var format: Format = .text

    func run() throws {
        let set = try mappings.load()
        let report = Linter.lint(uses: LocKeyUses.uses(set), catalogs: resources.catalogs())
        switch format {
        case .text:
            print(report.text, terminator: "")
        case .json:
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(JSONReport(report))
            print(String(decoding: data, as: UTF8.self))
        }
        if report.errorCount > 0 { throw ExitCode(1) }
    }

    /// `--format json`: the report with its counts and summary line.
    struct JSONReport: Encodable {
        var errors: Int
        var warnings: Int
        var summary: String
        var findings: [Finding]
        var coverage: [Coverage]

        init(_ report: LintReport) {
            errors = report.errorCount
            warnings = report.warningCount
            summary = report.summary
            findings = report.findings
            coverage = report.coverage
        }
    }
}
