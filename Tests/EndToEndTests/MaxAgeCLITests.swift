import Foundation
import TestSupport
import Testing

/// What `validate` and `render` show of `max_age` and `ttl: remaining`.
@Suite("pushbridge validate / render with max_age", .serialized)
struct MaxAgeCLITests {
    static let mapping = """
        version: 1
        events:
          driver.arrived:
            target: {token: {field: /token}}
            body: {key: driver_here}
            max_age: 10m
            too_old: dead-letter
            ttl: remaining
        """

    /// Runs `pushbridge` with the mapping above in a file of its own.
    static func run(_ arguments: (String) -> [String], stdin: String? = nil) async throws -> (status: Int32, out: String, err: String) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pb-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("rides.yaml").path
        try mapping.write(toFile: file, atomically: true, encoding: .utf8)
        return try await runPushbridge(arguments(file), stdin: stdin)
    }

    @Test("validate lists what max_age does after the summary")
    func validate() async throws {
        let r = try await Self.run { ["validate", $0] }
        #expect(r.status == 0, "\(r.err)")
        #expect(
            r.out == "ok: 1 file, 1 event type: driver.arrived\n"
                + "  driver.arrived: sent only within 10m of the Kafka timestamp; older: dead-lettered (too_old); ttl: what is left of the 10m\n")
    }

    @Test("render at --now for a record stamped --timestamp: ttl is what is left; too old says why and exits 2; preview ignores the age")
    func render() async throws {
        let event = #"{"type":"driver.arrived","token":"t"}"#
        let fresh = try await Self.run(
            { ["render", "--mappings", $0, "--event", "-", "--now", "2027-01-15T08:10:00Z", "--timestamp", "2027-01-15T08:06:00Z"] }, stdin: event)
        #expect(fresh.status == 0, "\(fresh.err)")
        #expect(fresh.out.contains(#""ttl":"360s""#) && fresh.out.contains(#""apns-expiration":"1800000960""#), "\(fresh.out)")
        let old = try await Self.run(
            { ["render", "--mappings", $0, "--event", "-", "--now", "2027-01-15T08:10:00Z", "--timestamp", "2027-01-15T07:58:00Z"] }, stdin: event)
        #expect(old.status == 2)
        #expect(old.err == "cannot render: the event is 12m old (from the Kafka timestamp), over its max_age of 10m [too_old]\n")
        let ignored = try await Self.run(
            {
                [
                    "render", "--mappings", $0, "--event", "-", "--now", "2027-01-15T08:10:00Z", "--timestamp", "2020-01-01T00:00:00Z",
                    "--ignore-max-age",
                ]
            },
            stdin: event)
        #expect(ignored.out.contains(#""ttl":"600s""#), "\(ignored.err)")
        // preview shows the text, whatever the age: an event file has no Kafka timestamp.
        let preview = try await Self.run({ ["preview", "--mappings", $0, "--event", "-", "--ios", "examples/resources/ios"] }, stdin: event)
        #expect(preview.status == 0 && preview.out.contains("DRIVER_HERE"), "\(preview.out)\(preview.err)")
        let bad = try await Self.run({ ["render", "--mappings", $0, "--event", "-", "--now", "08:10"] }, stdin: event)
        #expect(bad.status != 0 && bad.err.contains("--now 08:10: expected an RFC 3339 time with a zone"), "\(bad.err)")
    }
}
