import ArgumentParser
import Foundation
import Mapping

/// The event `render` and `preview` render: a Kafka record's value and headers.
struct EventOptions: ParsableArguments {
    @Option(name: .long, help: "The event's JSON (the Kafka record value), or - for standard input.")
    var event: String

    @Option(name: .long, help: "A Kafka header NAME=VALUE, e.g. ce_type=… for CloudEvents binary mode. Repeatable.")
    var header: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The Kafka record's coordinates TOPIC/PARTITION/OFFSET: an event without an ID takes them as its ID, which dedup goes by (default events/0/0).",
            valueName: "coordinates"))
    var source: String?

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
        guard let source else { return EventRecord(value: bytes, headers: headers) }
        let parts = source.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, let partition = Int32(parts[1]), let offset = Int64(parts[2]) else {
            throw ValidationError("--source \(source): expected TOPIC/PARTITION/OFFSET, e.g. events/0/42")
        }
        return EventRecord(value: bytes, headers: headers, topic: String(parts[0]), partition: partition, offset: offset)
    }
}
