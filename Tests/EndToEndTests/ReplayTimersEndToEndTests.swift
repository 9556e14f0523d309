import Dates
import Foundation
import Kafka
import TestSupport
import Testing

/// `pushbridge replay` of events whose push is due later (docs/timers.md, *Replay*): skipped as
/// `timer_not_armed` and nothing written to the timer topic unless `--rearm-timers` asks, which
/// writes their timers as a worker does; a push already due is sent either way.
@Suite("pushbridge replay with send_at: timers re-armed only when asked (separate process)", .serialized)
struct ReplayTimersEndToEndTests {
    @Test("replay skips pushes due later as timer_not_armed and writes no timer; --rearm-timers writes one each; --dry-run says which")
    func rearmOnlyWhenAsked() async throws {
        let e = try await SendAtEndToEndTests.start(.mock)
        let due = RFC3339.nowMilliseconds() + 3_600_000
        try await e.produceRaw(
            [SendAtEndToEndTests.reminder("later-0", due: due), SendAtEndToEndTests.reminder("later-1", due: due)]
                + [SendAtEndToEndTests.reminder("past-0", due: due - 3_700_000)])
        let config = try e.config(group: "e2e-replay-timers", httpPort: try FreePort.next(), sections: SendAtEndToEndTests.timers)
        let replay = ["replay", "--config", config, "--topic", e.topic, "--from-beginning"]

        let (plain, plainOutput) = try await e.pushbridge(replay)
        #expect(plain == 0, "\(plainOutput.suffix(2000))")
        #expect(plainOutput.contains("sent 1 (1 messages) · skipped 2"), "\(plainOutput.suffix(2000))")
        #expect(try await e.events.readAll("e2e-timers", partitions: 6, idle: .seconds(2)).isEmpty, "no timer written")
        #expect(e.acceptedTokens == ["past-0": 1])

        let (dry, dryOutput) = try await e.pushbridge(replay + ["--rearm-timers", "--dry-run", "--print"])
        #expect(dry == 0, "\(dryOutput.suffix(2000))")
        let deferredLines = dryOutput.split(separator: "\n").filter { $0.contains(#""deferred":{"due":""#) }
        #expect(deferredLines.count == 2 && deferredLines.allSatisfy { $0.contains(#""timer_topic":"e2e-timers""#) }, "\(dryOutput.suffix(2000))")
        #expect(dryOutput.contains("2 pushes due later would be written to e2e-timers"))
        #expect(try await e.events.readAll("e2e-timers", partitions: 6, idle: .seconds(2)).isEmpty, "a dry run writes nothing")

        let (rearmed, rearmOutput) = try await e.pushbridge(replay + ["--rearm-timers"])
        #expect(rearmed == 0, "\(rearmOutput.suffix(2000))")
        #expect(
            rearmOutput.contains("deferred 2") && rearmOutput.contains("2 pushes due later were written to e2e-timers"), "\(rearmOutput.suffix(2000))"
        )
        #expect(rearmOutput.contains("one the first run wrote that still waits is then there twice"))
        let timers = try await e.events.readAll("e2e-timers", partitions: 6, idle: .seconds(2))
        #expect(timers.count == 2, "one timer each")
        let fields = timers.compactMap { $0.header("pushbridge-timer")?.stringValue }
        #expect(fields.count == 2 && fields.allSatisfy { $0.contains("reason=send_at") && $0.contains("due=\(due)") }, "\(fields)")
        #expect(e.acceptedTokens == ["past-0": 2], "the push already due is sent again, as any replayed event")

        let (refused, refusal) = try await e.pushbridge(replay + ["--rearm-timers", "--validate-only"])
        #expect(refused == 64 || refused == 2, "\(refusal)")
        #expect(refusal.contains("--rearm-timers writes timers the workers send for real"))
        await e.stop()
    }
}
