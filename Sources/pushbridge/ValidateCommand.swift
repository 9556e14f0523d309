import ArgumentParser
import Foundation
import Mapping

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check mapping files and list every error.",
        discussion: """
            Errors are printed as FILE:LINE:COLUMN: error: MESSAGE, with a hint, for editors and CI. \
            The exit status is 1 if any file has an error; pushbridge never starts on a half-valid mapping. \
            Warnings (FILE:LINE:COLUMN: warning: ...) point at what loads but is likely a mistake, such as \
            a collapse key taken from the event ID; they do not change the exit status. Event types with \
            variants are listed after the summary with their variants in order, and those with a max_age \
            with what becomes of an event too old to send.

            Examples:
              pushbridge validate examples/mappings
              pushbridge validate mappings/orders.yaml mappings/chat.yaml
            """
    )

    @Argument(help: "Mapping files, or directories of *.yaml/*.yml/*.json files.")
    var paths: [String]

    func run() throws {
        let files = try MappingFiles.read(paths)
        do {
            // As `pushbridge run` loads them: `cap` and `dedup` checked, not refused (replay's are).
            let set = try MappingSet.load(files: files, statefulRules: true)
            MappingFiles.printWarnings(set)
            print(
                "ok: \(files.count) file\(files.count == 1 ? "" : "s"), \(set.mappings.count) event type\(set.mappings.count == 1 ? "" : "s"): \(set.eventTypes.joined(separator: ", "))"
            )
            for type in set.eventTypes {
                if let variants = set.variants(of: type) { print("  " + variants.summary) }
                if let pushes = set.pushes(of: type) {
                    print("  " + pushes.summary)
                    for push in pushes.pushes {
                        if case .variants(let variants) = push.route { print("    \(push.name): " + variants.summary) }
                    }
                }
                let mappings = set.mappings(of: type)
                // Once when every variant has the base's; else each variant's, named.
                for summary in [\EventMapping.sendAtSummary, \.digestSummary, \.maxAgeSummary] {
                    let same = Set(mappings.map { $0[keyPath: summary] }).count == 1
                    for mapping in same ? Array(mappings.prefix(1)) : mappings {
                        guard var line = mapping[keyPath: summary] else { continue }
                        if !same, let variant = mapping.variant {
                            line = line.replacingOccurrences(of: "\(type):", with: "\(type) (variant \(variant.label)):")
                        }
                        print("  " + line)
                    }
                }
            }
        } catch {
            MappingFiles.printErrors(error)
            throw ExitCode(1)
        }
    }
}
