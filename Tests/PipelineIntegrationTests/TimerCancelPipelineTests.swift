import Kafka
import MetricsTestKit
import Pipeline
import Testing

/// Cancellations (`pushbridge timers cancel`) against librdkafka's mock cluster: a timer engine
/// following the cancel topic sends nothing a cancellation covers (its fire gets the
/// cancellation, to account for it) and everything else, a cancellation written while no engine
/// ran holds at the next start, and the pending list of a subject shows what waits.
@Suite("Timer cancellations on the mock cluster", .serialized)
struct TimerCancelPipelineTests {
    @Test("cancelled timers are handed over as cancelled at their next release, before their due; the others fire at their due")
    func cancelled() async throws {
        let h = try TimerHarness(rate: 10)
        let backend = TestMetrics()
        let run = RunningTimers(
            try h.engine(group: "timers-cancel", metrics: PipelineMetrics(factory: backend)) { $0.cancelTopic = h.cancelTopic })
        #expect(try await h.warmUp(run.engine, group: "timers-cancel"))
        let a = try await h.schedule(user: "a", dueIn: 40_000, offset: 1)
        let b = try await h.schedule(user: "b", dueIn: 40_000, offset: 2)
        let c1 = try await h.schedule(user: "c", dueIn: 40_000, offset: 3)
        let c2 = try await h.schedule(user: "c", dueIn: 40_000, offset: 4)
        try await h.cancel(TimerCancel(scope: .subject(Array("a".utf8)), before: h.now, reason: "account deleted"))
        try await h.cancel(TimerCancel(scope: .id(c1.id), before: h.now, reason: ""))
        // Scheduled after the subject's cancellation: not covered.
        let aLater = try await h.schedule(user: "a", dueIn: 40_000, offset: 5)
        #expect(try await h.eventually { h.fired.count >= 5 })
        #expect(try await h.eventually { try await h.committedAll(group: "timers-cancel") })
        try await run.stop()
        let byID = Dictionary(h.fired.map { ($0.timer.id, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(h.fired.count == 5, "each once")
        #expect(byID[a.id]?.context.cancelled?.reason == "account deleted")
        #expect(byID[c1.id]?.context.cancelled != nil)
        for sent in [b, c2, aLater] {
            #expect(byID[sent.id]?.context.cancelled == nil)
            #expect((byID[sent.id]?.context.now ?? 0) >= sent.due, "fired at its due")
        }
        #expect((byID[a.id]?.context.now ?? .max) < a.due, "a cancelled timer is done at its next release, not kept to its due")
        #expect(backend.counters.first { $0.label == "pushbridge_timers_cancelled_total" }?.totalValue == 2)
        await h.stop()
    }

    @Test("a cancellation written while no engine ran is read before the next one releases anything; the pending list shows it")
    func cancelledWhileDown() async throws {
        let h = try TimerHarness(rate: 10)
        let soon = try await h.schedule(user: "d", dueIn: 500, offset: 1)
        let later = try await h.schedule(user: "d", dueIn: 60_000, offset: 2)
        try await h.cancel(TimerCancel(scope: .id(soon.id), before: h.now, reason: "no longer wanted"))
        let consumer = KafkaConsumerConfiguration(bootstrapServers: [h.cluster.bootstrapServers], groupID: "timers-down")
        let cancels = try await TimerCancels(topic: h.cancelTopic, consumer: consumer, logger: .init(label: "test")).readAll()
        let listed = try await PendingTimers.list(
            subject: Array("d".utf8), topic: h.topic, layout: h.layout, consumer: consumer, cancels: cancels, now: h.now)
        #expect(listed.map(\.timer.id) == [soon.id, later.id])
        #expect(listed.map { $0.cancelled != nil } == [true, false])
        #expect(
            try await PendingTimers.list(subject: Array("e".utf8), topic: h.topic, layout: h.layout, consumer: consumer, cancels: cancels, now: h.now)
                .isEmpty)
        // Due already when the engine starts: released at once, but only after the cancel topic is read.
        let run = RunningTimers(try h.engine(group: "timers-down", configure: { $0.cancelTopic = h.cancelTopic }))
        #expect(try await h.eventually { h.fired.count >= 2 })
        #expect(try await h.eventually { try await h.committedAll(group: "timers-down") })
        try await run.stop()
        #expect(h.fired.first { $0.timer.id == soon.id }?.context.cancelled?.reason == "no longer wanted")
        #expect(h.fired.first { $0.timer.id == later.id }?.context.cancelled == nil)
        let after = try await PendingTimers.list(
            subject: Array("d".utf8), topic: h.topic, layout: h.layout, consumer: consumer, cancels: cancels, now: h.now)
        #expect(after.isEmpty, "nothing pending once fired and committed: \(after.map(\.timer.id))")
        await h.stop()
    }
}
