import ArgumentParser
import Mapping

/// `--mappings`, as `render`, `preview` and `lint` take it.
struct MappingOptions: ParsableArguments {
    @Option(name: .long, parsing: .upToNextOption, help: "Mapping files or directories.")
    var mappings: [String]

    /// The mapping files, loaded (errors printed, exit 1).
    func load() throws -> MappingSet {
        try MappingFiles.load(mappings)
    }
}
