import FCMEmulator
import Foundation
import Kafka
import TestSupport
import Testing

/// `pushbridge replay` as a separate process against a real broker and the emulator.
@Suite("pushbridge replay (separate process, real broker)", .serialized)
struct ReplayEndToEndTests {
    @Test("an offset range is delivered exactly, and the workers' group offsets do not move")
    func replayRange() async throws {
        let e2e = try await EndToEnd(partitions: 2)
        let tokens = try await e2e.produce(40, prefix: "r")
        try await e2e.commit(group: "prod", [0: 5, 1: 7])
        let config = try e2e.config(group: "prod", httpPort: try FreePort.next())
        let before = try await e2e.committed(group: "prod")

        let (status, output) = try await e2e.pushbridge([
            "replay", "--config", config, "--topic", e2e.topic,
            "--from-offset", "0:3", "--from-offset", "1:2", "--to-offset", "0:9", "--to-offset", "1:6",
        ])
        #expect(status == 0, "\(output.suffix(3000))")
        let expected = try await e2e.events.keys(in: [0: 3..<9, 1: 2..<6])
        #expect(expected.count == 10 && expected.isSubset(of: Set(tokens)))
        #expect(e2e.acceptedTokens == Dictionary(uniqueKeysWithValues: expected.map { ($0, 1) }), "exactly the range, once each")
        #expect(output.contains("replay done: 10 events"), "\(output.suffix(2000))")
        #expect(output.contains("sent 10 (10 messages)"))
        #expect(output.contains("partition 0: 3 ..< 9 (6)") && output.contains("partition 1: 2 ..< 6 (4)"))
        #expect(try await e2e.committed(group: "prod") == before)
        #expect(before == [0: 5, 1: 7])
        await e2e.stop()
    }

    @Test("--dry-run --print renders every event and sends nothing")
    func dryRun() async throws {
        let e2e = try await EndToEnd(partitions: 1)
        try await e2e.produce(12, prefix: "d")
        try await e2e.produceRaw(["not json"])
        let config = try e2e.config(group: "prod", httpPort: try FreePort.next())

        let (status, output) = try await e2e.pushbridge([
            "replay", "--config", config, "--topic", e2e.topic, "--from-beginning", "--to-offset", "13", "--dry-run", "--print",
        ])
        #expect(status == 0, "\(output.suffix(3000))")
        #expect(e2e.emulator.messages.isEmpty && e2e.emulator.attempts.isEmpty, "a dry run sends nothing")
        let lines = output.split(separator: "\n").filter { $0.hasPrefix("{") && $0.contains(#""source":"events/0/"#) }
        #expect(lines.count == 13, "\(output.prefix(1500))")
        #expect(lines.filter { $0.contains(#""title_loc_key":"welcome_title""#) }.count == 12)
        #expect(lines.contains { $0.contains(#""source":"events/0/12""#) && $0.contains(#""code":"invalid_json""#) })
        #expect(output.contains("sent 12 (12 messages)") && output.contains("dead-lettered 1"))
        #expect(output.contains("dry run: nothing sent or written"))
        await e2e.stop()
    }

    @Test("--validate-only sends every event with FCM's validate_only: checked, none delivered")
    func validateOnly() async throws {
        let e2e = try await EndToEnd(partitions: 1)
        try await e2e.produce(5, prefix: "v")
        let config = try e2e.config(group: "prod", httpPort: try FreePort.next())

        let (status, output) = try await e2e.pushbridge([
            "replay", "--config", config, "--topic", e2e.topic, "--from-beginning", "--to-offset", "5", "--validate-only",
        ])
        #expect(status == 0, "\(output.suffix(3000))")
        #expect(e2e.emulator.messages.count == 5)
        #expect(e2e.emulator.messages.filter { !$0.validateOnly }.isEmpty)
        #expect(e2e.acceptedTokens.isEmpty, "nothing delivered")
        #expect(output.contains("validate-only sends") && output.contains("sent 5 (5 messages)"))
        await e2e.stop()
    }

    @Test("--event-type with a mapping set of its own replays only that type")
    func eventTypeFilter() async throws {
        let e2e = try await EndToEnd(partitions: 1)
        let welcome = try await e2e.produce(10, prefix: "w")
        let goodbye = (0..<6).map { "bye-\($0)" }
        try await e2e.produceRaw(goodbye.map { #"{"type":"user.goodbye","id":"\#($0)","name":"N","token":"\#($0)"}"# })
        let mappings = e2e.directory.appendingPathComponent("replay-mappings.yaml").path
        try """
        version: 1
        events:
          user.welcome:
            target: {token: {field: /token}}
            title: {key: welcome_title, args: [{field: /name}]}
          user.goodbye:
            target: {token: {field: /token}}
            title: {key: goodbye_title, args: [{field: /name}]}
        """.write(toFile: mappings, atomically: true, encoding: .utf8)
        let config = try e2e.config(group: "prod", httpPort: try FreePort.next())

        let (status, output) = try await e2e.pushbridge([
            "replay", "--config", config, "--topic", e2e.topic, "--from-beginning", "--to-offset", "16",
            "--event-type", "user.goodbye", "--mappings", mappings,
        ])
        #expect(status == 0, "\(output.suffix(3000))")
        #expect(Set(e2e.acceptedTokens.keys) == Set(goodbye))
        #expect(e2e.acceptedTokens.keys.allSatisfy { !welcome.contains($0) })
        #expect(output.contains("sent 6 (6 messages)") && output.contains("filtered 10"), "\(output.suffix(2000))")

        // A type no mapping knows is refused before anything is read.
        let unknown = try await e2e.pushbridge(["replay", "--config", config, "--topic", e2e.topic, "--from-beginning", "--event-type", "user.nope"])
        #expect(unknown.status == 2)
        #expect(unknown.output.contains("no mapping for --event-type user.nope"))
        await e2e.stop()
    }

    @Test("Ctrl-C stops cleanly and prints a command that resumes exactly where it stopped")
    func interruptAndResume() async throws {
        var faults = EmulatorFaults()
        // About 11 s for the whole range (4 in flight × 150 ms), so a loaded machine still signals mid-way.
        faults.latencyMilliseconds = 150
        let e2e = try await EndToEnd(partitions: 2, faults: faults)
        try await e2e.produce(300, prefix: "c")
        let config = try e2e.config(group: "prod", httpPort: try FreePort.next())
        let ends = e2e.events.producedEnds

        let log = e2e.directory.appendingPathComponent("replay.log").path
        let replay = try e2e.startPushbridge(
            [
                "replay", "--config", config, "--topic", e2e.topic, "--from-beginning",
                "--to-offset", "0:\(ends[0]!)", "--to-offset", "1:\(ends[1]!)", "--max-in-flight", "4",
            ], log: log)
        // Ctrl-C at the 40th acknowledged message, sent from a thread of its own: this task may
        // wait seconds for a pool thread while other tests run, long enough for the range to end.
        let emulator = e2e.emulator
        replay.signal(SIGINT, when: { emulator.messages.count >= 40 })
        let status = await replay.wait(timeout: .seconds(90))
        let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(status == 130, "\(output.suffix(3000))")
        #expect(output.contains("replay stopped"))
        let firstPart = e2e.acceptedTokens
        #expect(firstPart.count < 300, "stopped before the end")

        let resumeLine = try #require(output.split(separator: "\n").first { $0.hasPrefix("  pushbridge replay ") })
        let arguments = resumeLine.trimmingCharacters(in: .whitespaces).split(separator: " ").dropFirst().map(String.init)
        #expect(!arguments.contains("--from-beginning"))
        let (resumed, resumedOutput) = try await e2e.pushbridge(arguments)
        #expect(resumed == 0, "\(resumedOutput.suffix(3000))")
        let all = e2e.acceptedTokens
        #expect(all.count == 300, "every event once the resume is done")
        #expect(all.values.allSatisfy { $0 == 1 }, "the events in flight at Ctrl-C were finished, not sent again")
        await e2e.stop()
    }

    @Test("--commit records progress in the replay's own group; the workers' group is refused")
    func commitToOwnGroup() async throws {
        let e2e = try await EndToEnd(partitions: 1)
        try await e2e.produce(8, prefix: "g")
        let config = try e2e.config(group: "prod", httpPort: try FreePort.next())

        let refused = try await e2e.pushbridge([
            "replay", "--config", config, "--topic", e2e.topic, "--from-beginning", "--group", "prod", "--commit",
        ])
        #expect(refused.status == 2)
        #expect(refused.output.contains("is the workers' group"))
        let badOffset = try await e2e.pushbridge(["replay", "--config", config, "--topic", e2e.topic, "--from-offset", "0-5"])
        #expect(badOffset.status == 2)
        #expect(badOffset.output.contains("--from-offset 0-5: expected OFFSET, or PARTITION:OFFSET"))
        let badTime = try await e2e.pushbridge(["replay", "--config", config, "--topic", e2e.topic, "--from-time", "yesterday"])
        #expect(badTime.status == 2)
        #expect(badTime.output.contains("--from-time yesterday: expected an RFC 3339 time with a zone"))
        let noStart = try await e2e.pushbridge(["replay", "--config", config, "--topic", e2e.topic])
        #expect(noStart.status == 2)
        #expect(noStart.output.contains("give one of --from-offset, --from-time, --from-beginning"))

        let (status, output) = try await e2e.pushbridge([
            "replay", "--config", config, "--topic", e2e.topic, "--from-offset", "2", "--to-offset", "8", "--group", "backfill", "--commit",
        ])
        #expect(status == 0, "\(output.suffix(3000))")
        #expect(try await e2e.committed(group: "backfill") == [0: 8])
        #expect(try await e2e.committed(group: "prod") == [:])
        await e2e.stop()
    }

    @Test(
        "without an end, a replay stops at the high watermark seen when it starts; past the end, at the partition's end (mock cluster: tansu's watermark is wrong)"
    )
    func endsAtHighWatermark() async throws {
        let e2e = try await EndToEnd(partitions: 2, broker: .mock)
        let tokens = try await e2e.produce(30, prefix: "h")
        let config = try e2e.config(group: "prod", httpPort: try FreePort.next())

        let (status, output) = try await e2e.pushbridge(["replay", "--config", config, "--topic", e2e.topic, "--from-offset", "0"])
        #expect(status == 0, "\(output.suffix(3000))")
        #expect(Set(e2e.acceptedTokens.keys) == Set(tokens))
        #expect(output.contains("replay done: 30 events"))

        // Past the end: an empty range, said plainly.
        let (late, lateOutput) = try await e2e.pushbridge(["replay", "--config", config, "--topic", e2e.topic, "--from-offset", "1000"])
        #expect(late == 0)
        #expect(lateOutput.contains("replay done: 0 events"))
        #expect(e2e.acceptedTokens.count == 30)

        // An end past the partition's end: noted in the plan, and the read stops at the end.
        let (beyond, beyondOutput) = try await e2e.pushbridge([
            "replay", "--config", config, "--topic", e2e.topic, "--from-offset", "0", "--to-offset", "1000",
        ])
        #expect(beyond == 0, "\(beyondOutput.suffix(2000))")
        #expect(beyondOutput.contains("past the high watermark"))
        #expect(beyondOutput.contains("replay done: 30 events"))
        #expect(e2e.acceptedTokens.values.allSatisfy { $0 == 2 } && e2e.acceptedTokens.count == 30)
        await e2e.stop()
    }
}
