import Dates
import Foundation
import Kafka
import ProcessHarness
import TestSupport
import Testing

/// `send_at` with `pushbridge run` as a separate process (docs/timers.md): the worker writes a
/// push due later to the timer topic and commits past its event; its timer engine (the group
/// `<kafka.group>.timers`) sends it at its due time, through the emulator. A worker killed with
/// timers pending loses none; a timer topic of the wrong size stops the worker at start.
@Suite("send_at: pushbridge run defers pushes and sends them at their due time (separate processes)", .serialized)
struct SendAtEndToEndTests {
    static let mapping = """
        version: 1
        events:
          reminder:
            target: {token: {field: /token}}
            body: {key: reminder_body, args: [{field: /title}]}
            send_at: {field: /at}
            max_age: 1h
            replace_id: {from: event_id}
        """
    static let timers = "timers: {topic: e2e-timers, levels: 6, buckets: 1}"

    static func start(_ broker: EndToEnd.Broker, timerPartitions: Int32 = 6) async throws -> EndToEnd {
        let e = try await EndToEnd(partitions: 2, broker: broker)
        try mapping.write(to: e.directory.appendingPathComponent("mappings.yaml"), atomically: true, encoding: .utf8)
        try await e.createTopic("e2e-timers", partitions: timerPartitions)
        return e
    }

    static func reminder(_ token: String, due: Int64) -> String {
        #"{"type":"reminder","id":"\#(token)","token":"\#(token)","title":"Dentist","at":"\#(RFC3339.format(milliseconds: due))"}"#
    }

    /// When the emulator accepted `token`'s push, per copy (UTC milliseconds, from its monotonic
    /// clock and its start's wall time: within a few milliseconds of the worker's clock).
    static func acceptedAt(_ e: EndToEnd, _ token: String) -> [Int64] {
        let started = e.emulator.startedEpochSeconds
        return e.emulator.messages.filter { $0.token == token && !$0.validateOnly }.map { Int64(((started + $0.time) * 1000).rounded(.down)) }
    }

    @Test("run (tansu): pushes due later wait and go once at their due time; one already due goes at once; an unreadable send_at is dead-lettered")
    func scheduled() async throws {
        let e = try await Self.start(.tansu)
        let worker = try await e.startWorker(group: "e2e-send-at", sections: Self.timers)
        let due = RFC3339.nowMilliseconds() + 20_000
        let later = ["later-0", "later-1", "later-2"]
        try await e.produceRaw(
            later.map { Self.reminder($0, due: due) } + [
                Self.reminder("past-0", due: due - 80_000), #"{"type":"reminder","id":"bad-0","token":"bad-0","title":"x","at":"soon"}"#,
            ])
        #expect(try await e.waitUntilCommitted(group: "e2e-send-at"), "\(worker.output.suffix(2000))")
        if RFC3339.nowMilliseconds() < due - 2_000 {
            #expect(later.allSatisfy { e.acceptedTokens[$0] == nil }, "nothing before its due time")
        }
        #expect(e.acceptedTokens["past-0"] == 1, "due already: sent at once")
        let deadline = ContinuousClock.now + .seconds(120)
        while later.contains(where: { e.acceptedTokens[$0] == nil }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(later.allSatisfy { e.acceptedTokens[$0] == 1 }, "each once: \(e.acceptedTokens)\n\(worker.output.suffix(2000))")
        for token in later {
            #expect(Self.acceptedAt(e, token).allSatisfy { $0 >= due - 10 }, "\(token) sent before its due time")
        }
        let dead = try await e.events.readAll(e.deadLetterTopic, idle: .seconds(3))
        #expect(dead.compactMap { $0.header("pushbridge-reason-code")?.stringValue } == ["invalid_value"])
        #expect(try worker.metric(#"pushbridge_events_total{result="deferred"}"#) == 3)
        #expect(try worker.metric(#"pushbridge_timers_scheduled_total{event_type="reminder",reason="send_at"}"#) == 3)
        #expect(try worker.metric(#"pushbridge_timers_fired_total{reason="send_at"}"#) == 3)
        #expect(try worker.metric("pushbridge_timers_late_seconds_count") == 3)
        #expect(try worker.metric("pushbridge_timers_partitions") == 6, "the one worker holds every timer partition")
        #expect(try worker.metric("pushbridge_timers_waiting") == 0)
        let ready = try worker.get("/readyz")
        #expect(ready.status == 200 && ready.body.contains("timers: 6 partitions, 0 waiting"), "\(ready)")
        await expectCleanExit(worker)
        await e.stop()
    }

    @Test("run (tansu): a worker killed with timers pending loses none; the next one sends each at its due time, not before")
    func killedWithTimersPending() async throws {
        let e = try await Self.start(.tansu)
        let first = try await e.startWorker(group: "e2e-send-at-kill", sections: Self.timers)
        let due = RFC3339.nowMilliseconds() + 25_000
        let tokens = (0..<6).map { "pending-\($0)" }
        try await e.produceRaw(tokens.map { Self.reminder($0, due: due) })
        #expect(try await e.waitUntilCommitted(group: "e2e-send-at-kill"), "\(first.output.suffix(2000))")
        await first.kill9()
        let second = try await e.startWorker(group: "e2e-send-at-kill", sections: Self.timers)
        let deadline = ContinuousClock.now + .seconds(150)
        while tokens.contains(where: { e.acceptedTokens[$0] == nil }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        // At least once: a forward or fire done but not committed before the kill is done again
        // (docs/timers.md); the same replace_id makes the phone replace the copy.
        #expect(tokens.allSatisfy { (1...2).contains(e.acceptedTokens[$0] ?? 0) }, "\(e.acceptedTokens)\n\(second.output.suffix(2000))")
        #expect(tokens.allSatisfy { Self.acceptedAt(e, $0).allSatisfy { $0 >= due - 10 } }, "none before its due time")
        await expectCleanExit(second)
        await e.stop()
    }

    @Test("run (tansu): a second worker joins and the first leaves while timers wait: each is sent once, none before its due time")
    func rebalance() async throws {
        let e = try await Self.start(.tansu, timerPartitions: 12)
        // Two buckets: the timer group has partitions to share.
        let sections = "timers: {topic: e2e-timers, levels: 6, buckets: 2}"
        let first = try await e.startWorker(group: "e2e-send-at-rebalance", sections: sections)
        let start = RFC3339.nowMilliseconds()
        let tokens = (0..<40).map { "moving-\($0)" }
        // Due from 25 s to 64 s: some before the join, some between the join and the leave, most after.
        try await e.produceRaw(tokens.enumerated().map { Self.reminder($1, due: start + 25_000 + Int64($0) * 1_000) })
        #expect(try await e.waitUntilCommitted(group: "e2e-send-at-rebalance"), "\(first.output.suffix(2000))")
        let second = try await e.startWorker(group: "e2e-send-at-rebalance", sections: sections)
        let joined = ContinuousClock.now + .seconds(60)
        while (try? second.metric("pushbridge_timers_partitions")) ?? 0 == 0, ContinuousClock.now < joined {
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(try second.metric("pushbridge_timers_partitions") > 0, "the joiner took timer partitions: \(second.output.suffix(2000))")
        while RFC3339.nowMilliseconds() < start + 40_000 { try await Task.sleep(for: .milliseconds(200)) }
        let firedByFirst = try first.metric(#"pushbridge_timers_fired_total{reason="send_at"}"#)
        await expectCleanExit(first)
        let deadline = ContinuousClock.now + .seconds(150)
        while tokens.contains(where: { e.acceptedTokens[$0] == nil }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        // A graceful leave commits what is done and gives waiting records up: nothing is sent twice.
        #expect(tokens.allSatisfy { e.acceptedTokens[$0] == 1 }, "each once: \(e.acceptedTokens)\n\(second.output.suffix(2000))")
        for (i, token) in tokens.enumerated() {
            #expect(Self.acceptedAt(e, token).allSatisfy { $0 >= start + 25_000 + Int64(i) * 1_000 - 10 }, "\(token) sent before its due time")
        }
        #expect(try second.metric("pushbridge_timers_partitions") == 12, "the one left holds them all")
        let firedBySecond = try second.metric(#"pushbridge_timers_fired_total{reason="send_at"}"#)
        #expect(firedByFirst > 0 && firedBySecond > 0 && firedByFirst + firedBySecond == 40, "fired: \(firedByFirst) + \(firedBySecond)")
        await expectCleanExit(second)
        await e.stop()
    }

    @Test("run (mock cluster): a timer topic whose partitions are not levels × buckets stops the worker at start, saying so")
    func wrongTimerTopic() async throws {
        let e = try await Self.start(.mock, timerPartitions: 4)
        let config = try e.config(group: "e2e-send-at-size", httpPort: try FreePort.next(), sections: Self.timers)
        let (status, output) = try await e.pushbridge(["run", "--config", config], timeout: .seconds(60))
        #expect(status != 0)
        #expect(output.contains("the timer topic e2e-timers has 4 partitions; timers.levels × timers.buckets = 6"), "\(output.suffix(2000))")
        await e.stop()
    }
}
