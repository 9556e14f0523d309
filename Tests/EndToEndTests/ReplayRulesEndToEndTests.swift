import FCMEmulator
import Foundation
import Kafka
import TestSupport
import Testing

/// `pushbridge replay` of events whose mapping has `cap` or `dedup` (docs/replay.md,
/// docs/rules.md#caps-and-dedup), as separate processes on tansu with `pushbridge run` workers:
/// by default the replay hands them to the workers' rules stage, which withholds what FCM
/// already acknowledged; `--ignore-caps-and-dedup` sends them again; direct mode refuses them.
@Suite("replay of capped and deduplicated events: handed to the workers' rules stage (tansu)", .serialized)
struct ReplayRulesEndToEndTests {
    /// chat.message to a token, capped at 2 per device per hour (which implies dedup over the hour).
    static let mapping = RulesEngineEndToEndTests.mapping

    static func event(_ id: String, _ token: String) -> String { #"{"type":"chat.message","id":"\#(id)","token":"\#(token)"}"# }

    static let events = [("a1", "ann"), ("a2", "ann"), ("b1", "ben")].map { event($0.0, $0.1) }

    /// `render` of `event` until it is withheld (exit 2): its standard error.
    static func withheld(_ render: [String], _ event: String) async throws -> String {
        var last = ""
        let withheld = try await eventually(timeout: .seconds(30), every: .milliseconds(300)) {
            let r = try await runPushbridge(render, stdin: event)
            last = r.err
            return r.status == 2
        }
        #expect(withheld, "\(last)")
        return last
    }

    static func withheld(_ worker: WorkerProcess, _ rule: String) throws -> Double {
        try worker.metric(#"pushbridge_pushes_withheld_total{rule="\#(rule)",event_type="chat.message"}"#)
    }

    @Test(
        "re-key mode: a replay of pushes FCM acknowledged sends nothing new (the workers withhold them as duplicates, and the rules store says so to render); --ignore-caps-and-dedup sends them again"
    )
    func replayHandsToRulesStage() async throws {
        let e = try await EndToEnd(partitions: 2)
        let group = "e2e-replay-rules"
        try await e.createTopic("pushbridge.\(group).by-subject", partitions: 3)
        try await e.createTopic("pushbridge.\(group).rules-changelog", partitions: 3)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        let store = e.directory.appendingPathComponent("rules.sqlite").path
        let sections = "rules: {state_path: \(store)}"
        let worker = try await e.startWorker(group: group, sections: sections)
        try await e.produceRaw(Self.events)
        #expect(try await e.waitUntilCommitted(group: group), "\(worker.output.suffix(3000))")
        let delivered = await eventually(timeout: .seconds(90), every: .milliseconds(300)) { e.acceptedTokens == ["ann": 2, "ben": 1] }
        #expect(delivered, "\(e.acceptedTokens)\n\(worker.output.suffix(3000))")
        // The worker's store, read while it runs: a third event for ann is over the cap, a repeat
        // a duplicate (once the worker's tail has read its facts back into the store).
        let render = ["render", "--mappings", e.directory.appendingPathComponent("mappings.yaml").path, "--rules-store", store, "--event", "-"]
        let capped = try await Self.withheld(render, Self.event("a3", "ann"))
        #expect(capped.contains("cannot render: the cap is reached: 2 of 2 counted in the cap's window") && capped.hasSuffix("[cap]\n"), "\(capped)")
        let repeated = try await Self.withheld(render, Self.events[2])
        #expect(repeated.contains("FCM already acknowledged this push to every device") && repeated.hasSuffix("[duplicate]\n"), "\(repeated)")

        // A dry run says what the replay would do, and writes nothing.
        let config = try e.config(group: group, httpPort: 0, sections: sections)
        let replay = ["replay", "--config", config, "--topic", e.topic, "--from-beginning"]
        let (dryStatus, dry) = try await e.pushbridge(replay + ["--dry-run", "--print"])
        #expect(dryStatus == 0, "\(dry.suffix(3000))")
        #expect(dry.contains("handed to the rules stage 3") && dry.contains("would be written to pushbridge.\(group).by-subject"), "\(dry)")
        #expect(dry.contains(#""rules_stage":"pushbridge.\#(group).by-subject""#), "\(dry)")

        // The replay: each event written to the by-subject topic; the worker withholds all three.
        let (status, output) = try await e.pushbridge(replay)
        #expect(status == 0, "\(output.suffix(3000))")
        #expect(output.contains("replay done: 3 events") && output.contains("sent 0 (0 messages)"), "\(output)")
        #expect(output.contains("handed to the rules stage 3"), "\(output)")
        let withheld = try await eventually(timeout: .seconds(90), every: .milliseconds(300)) { try Self.withheld(worker, "duplicate") == 3 }
        #expect(withheld, "\(worker.output.suffix(3000))")
        #expect(e.acceptedTokens == ["ann": 2, "ben": 1], "nothing sent again: \(e.acceptedTokens)")
        #expect(try worker.metric("pushbridge_rules_rekeyed_total") == 3, "the replay's records are not the worker's stage 1's")

        // Told to, the replay sends them itself: again, past the cap.
        let (forcedStatus, forced) = try await e.pushbridge(replay + ["--ignore-caps-and-dedup"])
        #expect(forcedStatus == 0, "\(forced.suffix(3000))")
        #expect(forced.contains("sent 3 (3 messages)") && forced.contains("sent directly, cap and dedup not applied"), "\(forced)")
        #expect(e.acceptedTokens == ["ann": 4, "ben": 2], "\(e.acceptedTokens)")
        #expect(try Self.withheld(worker, "duplicate") == 3 && Self.withheld(worker, "cap") == 0)
        await expectCleanExit(worker)
        await e.stop()
    }

    @Test("direct mode (rules.source.keyed_by: user): a replay of a capped event type is refused, naming --ignore-caps-and-dedup")
    func directModeRefused() async throws {
        let e = try await EndToEnd(partitions: 1)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        try await e.produceRaw(Self.events)
        let config = try e.config(group: "e2e-replay-direct", httpPort: 0, sections: "rules: {source: {keyed_by: user, partitioner: murmur2}}")
        let (status, output) = try await e.pushbridge(["replay", "--config", config, "--topic", e.topic, "--from-beginning"])
        #expect(status == 2, "\(output.suffix(3000))")
        #expect(
            output.contains(
                "chat.message has cap or dedup, and rules.source.keyed_by is user: the workers decide them where they read the source, and a replay cannot hand them over. Replay them with --ignore-caps-and-dedup"
            ), "\(output)")
        #expect(e.emulator.attempts.isEmpty)
        await e.stop()
    }

    @Test("re-key mode with no by-subject topic: the replay is refused before it reads anything, naming the topic and the flag")
    func missingRulesStageTopic() async throws {
        let e = try await EndToEnd(partitions: 1)
        try Self.mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        try await e.produceRaw(Self.events)
        let config = try e.config(group: "e2e-replay-nostage", httpPort: 0)
        let (status, output) = try await e.pushbridge(["replay", "--config", config, "--topic", e.topic, "--from-beginning"])
        #expect(status == 2, "\(output.suffix(3000))")
        #expect(
            output.contains("the rules stage's topic pushbridge.e2e-replay-nostage.by-subject (rules.by_subject_topic) does not exist"),
            "\(output)")
        #expect(output.contains("--ignore-caps-and-dedup"), "\(output)")
        #expect(e.emulator.attempts.isEmpty)
        await e.stop()
    }
}
