import ArgumentParser
import Foundation
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
            RunCommand.self, ReplayCommand.self, OffsetsCommand.self, TimersCommand.self, RegistryCommand.self, DemoCommand.self,
            EmulatorCommand.self,
            ValidateCommand.self,
            RenderCommand.self, LintCommand.self, PreviewCommand.self,
        ]
    )

    /// ArgumentParser's own `main`, but the process then leaves with `_exit` once stdout and
    /// stderr are flushed, skipping the C libraries' `atexit` cleanup. OpenSSL's cleanup frees
    /// its list of registered threads while threads that used it (librdkafka's, libcurl's, the
    /// dispatch pool's) may still be exiting, and a thread's exit then deregisters itself from
    /// the freed list: "double free or corruption" in `init_thread_deregister`, once in many
    /// runs, after the worker had stopped cleanly (docs/testing.md). Every command has released
    /// its resources when it returns; nothing the cleanup does is needed at exit.
    static func main() async {
        var status = ExitCode.success
        do {
            var command = try await asyncParseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            status = exitCode(for: error)
            let message = fullMessage(for: error)
            if !message.isEmpty {
                if status.isSuccess {
                    print(message)
                } else {
                    FileHandle.standardError.write(Data("\(message)\n".utf8))
                }
            }
        }
        fflush(nil)
        _exit(status.rawValue)
    }
}
