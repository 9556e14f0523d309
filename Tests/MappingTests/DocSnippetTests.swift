import Foundation
import JSON
import Testing

@testable import FCMEmulator
@testable import Mapping

/// The mapping files the docs show load, and the complete example sends what docs/mapping.md says
/// it sends: the docs cannot drift from the loader and the renderer.
@Suite("Mapping snippets in the docs")
struct DocSnippetTests {
    /// The fenced ```yaml blocks of a Markdown file, with the line each starts on.
    static func yamlBlocks(_ path: String) throws -> [(line: Int, text: String)] {
        let lines = try String(contentsOfFile: repositoryRoot + "/" + path, encoding: .utf8).components(separatedBy: "\n")
        var blocks: [(line: Int, text: String)] = []
        var start: Int?
        var body: [String] = []
        for (i, line) in lines.enumerated() {
            if start == nil, line.trimmingCharacters(in: .whitespaces) == "```yaml" {
                (start, body) = (i + 1, [])
            } else if let s = start, line.trimmingCharacters(in: .whitespaces) == "```" {
                blocks.append((s + 1, body.joined(separator: "\n")))
                start = nil
            } else if start != nil {
                body.append(line)
            }
        }
        return blocks
    }

    /// A block that is a whole mapping file (or its `events:` map): loaded as one.
    static func mappingFiles(_ path: String) throws -> [(line: Int, text: String)] {
        try yamlBlocks(path).compactMap { block in
            let lines = block.text.split(separator: "\n").map(String.init)
            guard lines.contains(where: { $0.hasPrefix("events:") }), !lines.contains(where: { $0.hasPrefix("kafka:") }) else { return nil }
            return (block.line, lines.contains(where: { $0.hasPrefix("version:") }) ? block.text : "version: 1\n" + block.text)
        }
    }

    @Test("every mapping file in docs/mapping.md, docs/rules.md and the README loads", arguments: ["docs/mapping.md", "docs/rules.md", "README.md"])
    func snippetsLoad(path: String) throws {
        let files = try Self.mappingFiles(path)
        #expect(!files.isEmpty)
        for (line, text) in files {
            do {
                _ = try MappingSet.load(files: [("\(path):\(line)", text)])
            } catch {
                Issue.record("\(path):\(line): \(error.errors.map(\.description).joined(separator: "\n"))")
            }
        }
    }

    @Test("every example event renders to messages FCM's discovery document accepts, with nothing a phone would ignore")
    func examplesAccepted() throws {
        let set = try exampleMappings()
        let dir = repositoryRoot + "/examples/events"
        let devices: MappingSet.DeviceLookup = { _ in
            [
                UserDevice(kind: .fid, id: "fid-1", platform: "android"),
                UserDevice(kind: .token, id: "token-2", platform: "ios", pushToStart: ["DeliveryAttributes": "p2s-2"]),
            ]
        }
        var checked = 0
        var notRendered: [String] = []
        for name in try FileManager.default.contentsOfDirectory(atPath: dir).sorted() where name.hasSuffix(".json") {
            let json = try String(contentsOfFile: "\(dir)/\(name)", encoding: .utf8)
            // Produced now: a Live Activity's timestamp is the record's time, which a phone
            // (the device notes) compares with its clock.
            let record = EventRecord(value: Array(json.utf8), timestamp: EpochClock.milliseconds())
            guard case .success(let rendered) = set.render(record, now: renderNow, devices: devices) else {
                notRendered.append(name)
                continue
            }
            for message in rendered.messages {
                var validator = MessageValidator()
                let result = validator.validate(body: message.requestBody())
                let accepted = try #require(result, "\(name): \(validator.violations)")
                #expect(DeviceNote.notes(for: accepted.message).isEmpty, "\(name): \(DeviceNote.notes(for: accepted.message))")
                checked += 1
            }
        }
        #expect(checked >= 17)
        // A status no variant takes (skipped on purpose), the registry example's events (chats,
        // likes, the digested comments), whose mapping is examples/registry/mapping.yaml, and the
        // reminder, whose send_at counts from the record's time (now), so at the fixed render
        // clock it is too old.
        // (`pushbridge demo` sends those: DemoTests.)
        #expect(
            notRendered == [
                "chat-message.user-43.json", "chat-message.user-44.json", "chat-message.user.json", "comment-created.user-42.1.json",
                "comment-created.user-42.2.json", "comment-created.user-42.3.json", "order-status-returned.json", "post-liked.user-42.json",
                "post-liked.user-44.1.json", "post-liked.user-44.2.json", "post-liked.user-44.3.json",
                "reminder.json",
            ])
    }

    @Test("the complete example sends the message docs/mapping.md shows")
    func completeExample() throws {
        let doc = try String(contentsOfFile: repositoryRoot + "/docs/mapping.md", encoding: .utf8)
        let section = try #require(doc.components(separatedBy: "## A complete example").dropFirst().first)
        let yaml = try #require(section.components(separatedBy: "```yaml\n").dropFirst().first?.components(separatedBy: "```").first)
        let event = try #require(section.components(separatedBy: "For the event `").dropFirst().first?.components(separatedBy: "`").first)
        let json = try #require(section.components(separatedBy: "```json\n").dropFirst().first?.components(separatedBy: "```").first)
        let sent = try bodies(try load(yaml), event.replacingOccurrences(of: "\n", with: ""))
        #expect(sent.count == 1)
        #expect(try JSONParser.parse(Array(try #require(sent.first).utf8)) == JSONParser.parse(Array(json.utf8)))
    }
}
