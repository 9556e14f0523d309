import ArgumentParser
import Foundation
import Mapping

/// The event `render` and `preview` render: a Kafka record's value and headers.
struct EventOptions: ParsableArguments {
    @Option(name: .long, help: "The event's JSON (the Kafka record value), or - for standard input.")
    var event: String

    @Option(name: .long, help: "A Kafka header NAME=VALUE, e.g. ce_type=… for CloudEvents binary mode. Repeatable.")
    var header: [String] = []

    /// `--event`'s bytes with the `--header`s, no timestamp.
    func record() throws -> EventRecord {
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
        return EventRecord(value: bytes, headers: headers)
    }
}
