import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("pushbridge validate / render", .serialized)
struct CLITests {
    @Test("validate accepts the examples")
    func validateExamples() async throws {
        let r = try await runPushbridge(["validate", "examples/mappings"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.hasPrefix("ok: 6 files, 13 event types"))
    }

    @Test("--version names pushbridge's version and commit and the librdkafka, libcurl, nghttp2 and OpenSSL it runs with")
    func version() async throws {
        let r = try await runPushbridge(["--version"])
        #expect(r.status == 0, "\(r.err)")
        let lines = r.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 4, "\(r.out)")
        #expect(lines.first?.hasPrefix("pushbridge 0.1.0 (commit ") == true, "\(r.out)")
        #expect(lines.dropFirst().first?.hasPrefix("librdkafka 2.") == true, "\(r.out)")
        #expect(lines.dropFirst(2).first?.hasPrefix("libcurl ") == true && lines.dropFirst(2).first?.contains("nghttp2") == true, "\(r.out)")
        // The nghttp2 engine's libraries, as loaded: `nghttp2 1.52.0 (OpenSSL 3.0.19)`.
        #expect(lines.last?.wholeMatch(of: /nghttp2 \d+\.\d+\.\d+ \(OpenSSL \d+\.\d+\.\d+\)/) != nil, "\(r.out)")
    }

    /// A full run had about 1,400 descriptors open when one died spawning `pushbridge` in
    /// Foundation's `Process.run()`, which reads past glibc's readdir buffer once /proc/self/fd
    /// lists more than it holds (``PipedCommand``). Built with `-sanitize=address` and
    /// runPushbridge on `Process`, this test reported that heap-buffer-overflow on every run.
    @Test("pushbridge runs while the test process has 1,400 more descriptors open, as a full test run has")
    func manyDescriptorsOpen() async throws {
        let held = (0..<1_400).map { _ in open("/dev/null", O_RDONLY) }
        defer { for fd in held where fd >= 0 { close(fd) } }
        #expect(held.allSatisfy { $0 >= 0 })
        let r = try await runPushbridge(["--version"])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.out.hasPrefix("pushbridge "), "\(r.out)")
    }

    @Test("validate lists every error as file:line:column and exits 1")
    func validateErrors() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pb-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = dir.appendingPathComponent("bad.yaml").path
        try "version: 1\nevents:\n  e:\n    target: {token: t, topic: x}\n    body: {key: k}\n    data: {from: x}\n".write(
            toFile: bad, atomically: true, encoding: .utf8)
        let r = try await runPushbridge(["validate", bad])
        #expect(r.status == 1)
        #expect(r.err.contains("\(bad):4:13: error: `target` has more than one kind: token, topic"))
        #expect(r.err.contains("\(bad):6:12: error: data key \"from\" is reserved by FCM"))
        #expect(r.err.hasSuffix("2 errors\n"))
    }

    /// More than a pipe holds (64 KiB) on standard error, while standard output is read too: the
    /// harness reads both at once, or the command would block on its full stderr for ever.
    @Test("validate of 2,000 bad mappings writes every error, over 64 KiB of them")
    func validateManyErrors() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pb-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = dir.appendingPathComponent("bad.yaml").path
        let events = (0..<2_000).map { "  e\($0):\n    target: {token: t, topic: x}\n    body: {key: k}\n" }.joined()
        try ("version: 1\nevents:\n" + events).write(toFile: bad, atomically: true, encoding: .utf8)
        let r = try await runPushbridge(["validate", bad])
        #expect(r.status == 1)
        #expect(r.err.utf8.count > 65_536)
        #expect(r.err.hasSuffix("2000 errors\n"), "\(r.err.suffix(200))")
    }

    @Test("validate prints a warning with file:line for a collapse key per event, and still exits 0")
    func validateWarnings() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pb-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("dup.yaml").path
        try "version: 1\nevents:\n  e:\n    target: {token: t}\n    body: {key: k}\n    collapse_key: {from: event_id}\n"
            .write(toFile: file, atomically: true, encoding: .utf8)
        let r = try await runPushbridge(["validate", file])
        #expect(r.status == 0, "\(r.err)")
        #expect(r.err.contains("\(file):6:19: warning: collapse_key is the event's ID"), "\(r.err)")
        #expect(r.err.contains("replace_id: {from: event_id}"))
        #expect(r.out.hasPrefix("ok: 1 file, 1 event type"))
    }

    @Test("render prints the request body; reads the event from stdin with -")
    func render() async throws {
        let file = try await runPushbridge(["render", "--mappings", "examples/mappings", "--event", "examples/events/welcome.json"])
        #expect(file.status == 0, "\(file.err)")
        #expect(file.out.hasPrefix(#"{"message":{"android":{"notification":{"title_loc_args":["Alice"]"#))
        let stdin = try await runPushbridge(["render", "--mappings", "examples/mappings", "--event", "-"], stdin: try exampleEvent("stock.json"))
        #expect(stdin.out.contains(#""topic":"industry-tech""#))
        let pretty = try await runPushbridge(["render", "--mappings", "examples/mappings", "--event", "examples/events/welcome.json", "--pretty"])
        #expect(pretty.out.contains("\n  \"message\": {"))
    }

    @Test("render explains why an event cannot be sent and exits 2")
    func renderFailure() async throws {
        let r = try await runPushbridge(["render", "--mappings", "examples/mappings", "--event", "-"], stdin: #"{"type":"user.welcome","user":{}}"#)
        #expect(r.status == 2)
        #expect(r.err == "cannot render: title arg 1: field /user/first_name is missing or null and has no default [missing_field]\n")
    }

    @Test("--help teaches with examples")
    func help() async throws {
        let r = try await runPushbridge(["render", "--help"])
        #expect(r.out.contains("  pushbridge render --mappings examples/mappings \\\n      --event examples/events/welcome.json\n"))
    }

    @Test(
        "render and preview read --event and --header alike: a CloudEvent in binary mode, a header without =, an event file missing",
        arguments: ["render", "preview"])
    func eventOptions(command: String) async throws {
        let base =
            [command, "--mappings", "examples/mappings"] + (command == "preview" ? ["--ios", "examples/resources/ios", "--locale", "fr"] : [])
        let binary = try await runPushbridge(
            base + ["--event", "-", "--header", "ce_type=user.welcome", "--header", "ce_id=evt-7"],
            stdin: #"{"user":{"first_name":"Ana","fcm_token":"t-1"}}"#)
        #expect(binary.status == 0, "\(binary.err)")
        #expect(binary.out.contains("Ana"), "the type from ce_type, the data from the value: \(binary.out)")
        let badHeader = try await runPushbridge(base + ["--event", "examples/events/welcome.json", "--header", "ce_type"])
        #expect(badHeader.status == 64 && badHeader.err.contains("--header ce_type: expected NAME=VALUE"), "\(badHeader.err)")
        let missing = try await runPushbridge(base + ["--event", "no-such-event.json"])
        #expect(missing.status == 64 && missing.err.contains("cannot read no-such-event.json"), "\(missing.err)")
    }

    @Test("--mappings, --event and --header say the same in render's, preview's and lint's --help")
    func sharedHelp() async throws {
        let mappings = "--mappings <mappings> Mapping files or directories."
        let event = "--event <event> The event's JSON (the Kafka record value), or - for standard input."
        let header = "--header <header> A Kafka header NAME=VALUE, e.g. ce_type=… for CloudEvents binary mode. Repeatable."
        for (command, expected) in [("render", [mappings, event, header]), ("preview", [mappings, event, header]), ("lint", [mappings])] {
            let help = try await runPushbridge([command, "--help"]).out.split(whereSeparator: \.isWhitespace).joined(separator: " ")
            for line in expected { #expect(help.contains(line), "\(command): \(line)") }
        }
    }
}

/// An example event from examples/events, as the README's commands read it.
private func exampleEvent(_ name: String) throws -> String {
    try String(contentsOfFile: Repository.root + "/examples/events/\(name)", encoding: .utf8)
}
