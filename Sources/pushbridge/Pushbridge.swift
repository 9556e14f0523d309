import ArgumentParser
import Jobs

@main
struct Pushbridge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pushbridge",
        abstract: "Turn Kafka domain events into localized Firebase Cloud Messaging pushes.",
        discussion: """
            Mapping files (YAML or JSON) say, per event type, which localization keys to send and which \
            event fields become their ordered string arguments. The phone renders the text in the user's \
            language from the app's own string resources; pushbridge never translates.

            Start with:
              pushbridge validate examples/mappings
              pushbridge render --mappings examples/mappings \\
                  --event examples/events/welcome.json

            Mapping format: docs/mapping.md. Editors validate files against schemas/mapping.schema.json.
            """,
        version: BuildInfo.current.description,
        subcommands: [
            RunCommand.self, ReplayCommand.self, OffsetsCommand.self, RegistryCommand.self, DemoCommand.self, EmulatorCommand.self,
            ValidateCommand.self,
            RenderCommand.self, LintCommand.self, PreviewCommand.self,
        ]
    )
}
