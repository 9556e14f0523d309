import ArgumentParser
import Foundation
import Mapping

struct RenderCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Print the exact FCM request bodies an event would produce.",
        discussion: """
            Prints one {"message": ...} body per line (one per token for a token list), exactly as \
            pushbridge would POST it to FCM's messages:send, or the reason the event cannot be sent \
            (exit status 2).

            Examples:
              pushbridge render --mappings examples/mappings \\
                  --event examples/events/welcome.json
              cat event.json | pushbridge render --mappings m.yaml --event - --pretty
              pushbridge render --mappings m.yaml --event data.json \\
                  --header ce_type=order.shipped --header ce_id=42
            """
    )

    @Option(name: .long, parsing: .upToNextOption, help: "Mapping files or directories.")
    var mappings: [String]

    @Option(name: .long, help: "The event's JSON (the Kafka record value), or - for standard input.")
    var event: String

    @Option(name: .long, help: "A Kafka header NAME=VALUE, e.g. ce_type=… for CloudEvents binary mode. Repeatable.")
    var header: [String] = []

    @Flag(help: "Indent the JSON (the bytes sent are compact).")
    var pretty = false

    @Flag(name: .customLong("validate-only"), help: "Add \"validate_only\": true, FCM's dry run.")
    var validateOnly = false

    func run() throws {
        let set = try MappingFiles.load(mappings)
        let bytes: [UInt8]
        if event == "-" {
            bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        } else {
            guard let data = FileManager.default.contents(atPath: event) else { throw ValidationError("cannot read \(event)") }
            bytes = Array(data)
        }
        var headers: [(name: String, value: [UInt8]?)] = []
        for h in header {
            guard let eq = h.firstIndex(of: "=") else { throw ValidationError("--header \(h): expected NAME=VALUE") }
            headers.append((String(h[..<eq]), Array(h[h.index(after: eq)...].utf8)))
        }
        switch set.render(EventRecord(value: bytes, headers: headers)) {
        case .success(let rendered):
            for message in rendered.messages {
                print(String(decoding: message.requestBody(validateOnly: validateOnly, pretty: pretty), as: UTF8.self))
            }
        case .failure(let failure):
            FileHandle.standardError.write(Data("cannot render: \(failure.reason) [\(failure.code)]\n".utf8))
            throw ExitCode(2)
        }
    }
}
