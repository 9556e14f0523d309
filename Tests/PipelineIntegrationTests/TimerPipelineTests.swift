import Kafka
import MetricsTestKit
import Pipeline
import Testing

/// The timer engine (``TimerPipeline``) against librdkafka's mock cluster, with timer records
/// written directly and a virtual clock 5–30 times the real one: records go down the delay levels
/// and fire, never before their due time; offsets are committed past what is done and only
/// that; a revoke gives waiting records up at once and a restart reads them again.
@Suite("Timer engine on the mock cluster: forwards, fires, commits, revokes", .serialized)
struct TimerPipelineTests {
    /// Virtual delays (ms) that take several levels: 3 s … 100 s.
    static let delays: [Int64] = [3_000, 9_500, 17_000, 33_000, 45_250, 64_000, 70_000, 100_000]

    @Test("timers due later are forwarded down the ladder and fire once each, not before their due; every record is committed")
    func forwardsAndFires() async throws {
        let h = try TimerHarness(rate: 10)
        let run = RunningTimers(try h.engine(group: "timers-basic"))
        #expect(try await h.warmUp(run.engine, group: "timers-basic"))
        var scheduled: [TimerRecord] = []
        for (i, delay) in Self.delays.enumerated() {
            scheduled.append(try await h.schedule(user: "u\(i)", dueIn: delay, offset: Int64(i)))
        }
        _ = try await h.producer.send(KafkaProducerRecord(topic: h.topic, partition: 0, value: Array("no timer".utf8)))
        #expect(try await h.eventually { h.fired.count >= scheduled.count })
        #expect(try await h.eventually { try await h.committedAll(group: "timers-basic") }, "committed past every forward and fire")
        try await run.stop()
        let fired = h.fired
        let firedIDs: [String] = fired.map(\.timer.id.hex).sorted()
        let scheduledIDs: [String] = scheduled.map(\.id.hex).sorted()
        #expect(firedIDs == scheduledIDs, "each once")
        for f in fired {
            #expect(f.context.now >= f.timer.due, "never early: \(f.timer.id)")
            // Lateness is the bench's to measure (design §8 step 4): beside the other suites on two
            // cores, the runners wait seconds for a thread. Only a lost wake-up is caught here.
            #expect(f.context.now - f.timer.due < 100_000, "late by < 10 s real: \(f.context.now - f.timer.due) ms virtual")
            let original = scheduled.first { $0.id == f.timer.id }
            #expect(f.timer.value == original?.value, "the source event, byte for byte")
            #expect(f.timer.sourceHeaders.first?.name == "traceparent")
        }
        // How many hops each took depends on how late each level let it go (a record with under
        // a second left when released fires instead of moving on): loaded beside the other
        // suites, lateness of seconds (tens of seconds virtual) took hops away, and a run had
        // fewer than five. Which level a remaining time takes is TimerLadder's (pure tests);
        // here, that records were forwarded at all, and that every forward is in the topic.
        let hops = fired.map(\.timer.hops)
        #expect(hops.reduce(0, +) >= 1, "forwarded down the levels: \(hops)")
        let ends = try await h.ends()
        #expect(ends.values.reduce(0, +) == Int64(scheduled.count + hops.reduce(0, +) + 2), "first writes + forwards + warm-up + junk")
        #expect(Set(ends.keys).count >= 6, "several partitions: \(ends.keys.sorted())")
        await h.stop()
    }

    @Test("a record that is no timer is dead-lettered as malformed_timer and committed past")
    func unreadable() async throws {
        let h = try TimerHarness()
        _ = try await h.producer.send(KafkaProducerRecord(topic: h.topic, partition: 3, value: Array("no timer".utf8)))
        let run = RunningTimers(try h.engine(group: "timers-junk"))
        #expect(try await h.eventually { try await h.committedAll(group: "timers-junk") })
        try await run.stop()
        let admin = try KafkaConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: [h.cluster.bootstrapServers], groupID: nil))
        try admin.assign([TopicPartitionOffset(TopicPartition(topic: h.deadLetterTopic, partition: 0), offset: .beginning)])
        var dead: KafkaMessage?
        for try await m in admin.messages {
            dead = m
            break
        }
        await admin.close()
        #expect(dead?.header("pushbridge-reason-code")?.stringValue == "malformed_timer")
        #expect(dead?.header("pushbridge-source-partition")?.stringValue == "3")
        await h.stop()
    }

    @Test("a forward Kafka refuses is counted as a write error and written again; every timer fires once, none early")
    func forwardRefused() async throws {
        let h = try TimerHarness(rate: 10)
        let backend = TestMetrics()
        let run = RunningTimers(try h.engine(group: "timers-refused", metrics: PipelineMetrics(factory: backend)))
        #expect(try await h.warmUp(run.engine, group: "timers-refused"))
        var scheduled: [TimerRecord] = []
        for (i, delay) in [9_500, 17_000, 33_000].enumerated() {
            scheduled.append(try await h.schedule(user: "f\(i)", dueIn: Int64(delay), offset: Int64(i)))
        }
        // Kafka refuses the next produce requests (not retried by librdkafka): the first
        // forwards' writes fail, in the producer's delivery callback.
        h.cluster.pushRequestErrors(.produce, Array(repeating: .topicAuthorizationFailed, count: 3))
        #expect(try await h.eventually { h.fired.count >= scheduled.count })
        #expect(try await h.eventually { try await h.committedAll(group: "timers-refused") })
        try await run.stop()
        #expect(Set(h.fired.map(\.timer.id)) == Set(scheduled.map(\.id)) && h.fired.count == scheduled.count, "each once")
        #expect(h.fired.allSatisfy { $0.context.now >= $0.timer.due }, "none early")
        let hops = h.fired.map(\.timer.hops).reduce(0, +)
        let ends = try await h.ends()
        #expect(ends.values.reduce(0, +) == Int64(scheduled.count + hops + 1), "first writes + each forward once + warm-up")
        #expect(try backend.expectCounter("pushbridge_record_write_errors_total").totalValue >= 1, "the refused forwards were counted")
        await h.stop()
    }

    @Test("a fire that is not done is not committed past; the next engine reads it again and fires it")
    func fireFailure() async throws {
        let h = try TimerHarness()
        let failing = try await h.schedule(user: "fails", dueIn: 2_000, offset: 0)
        let level = h.layout.ladder.level(remainingMilliseconds: 2_000)!
        let partition = h.layout.partition(key: failing.key, level: level)
        // Behind it in its partition: done, but not committed past the failed one.
        let behind = try await h.schedule(user: "fails", dueIn: 2_500, offset: 1)
        for i in 0..<4 { try await h.schedule(user: "ok\(i)", dueIn: 2_000, offset: Int64(10 + i)) }
        let first = RunningTimers(try h.engine(group: "timers-fail", accept: { $0.id != failing.id }))
        #expect(try await h.eventually { h.fired.count >= 6 })
        try await Task.sleep(for: .milliseconds(800))  // several commit intervals
        #expect(try await h.committed(group: "timers-fail")[partition] ?? 0 == 0, "not committed past the failed fire")
        let stopping = ContinuousClock.now
        try await first.stop()
        #expect(ContinuousClock.now - stopping < .seconds(10), "the stop does not wait for the unfinished record")
        #expect(try await h.committed(group: "timers-fail")[partition] ?? 0 == 0, "nor at the end")
        let second = RunningTimers(try h.engine(group: "timers-fail"))
        #expect(try await h.eventually { h.fired.filter { $0.timer.id == failing.id }.count >= 2 })
        #expect(try await h.eventually { try await h.committedAll(group: "timers-fail") })
        try await second.stop()
        #expect(h.fired.filter { $0.timer.id == failing.id }.allSatisfy { $0.context.now >= failing.due })
        #expect(h.fired.contains { $0.timer.id == behind.id })
        await h.stop()
    }

    @Test("a stopped engine gives its waiting records up; the next one reads them again and fires each once, none early")
    func restart() async throws {
        let h = try TimerHarness(rate: 5)
        let first = RunningTimers(try h.engine(group: "timers-restart"))
        #expect(try await h.warmUp(first.engine, group: "timers-restart"))
        let base = try await h.committed(group: "timers-restart").values.reduce(0, +)
        var scheduled: [TimerRecord] = []
        for (i, delay) in [56_000, 58_000, 60_000, 63_000].enumerated() {
            scheduled.append(try await h.schedule(user: "r\(i)", dueIn: Int64(delay), offset: Int64(i)))
        }
        // The first hop (32 virtual s = 6.4 s real) is forwarded and committed; the next waits
        // (the first fire is at 11.2 s real).
        #expect(try await h.eventually { try await h.committed(group: "timers-restart").values.reduce(0, +) >= base + 4 })
        #expect(try await h.eventually { first.engine.waiting > 0 })
        let stopping = ContinuousClock.now
        try await first.stop()
        #expect(ContinuousClock.now - stopping < .seconds(10), "waiting records do not hold the stop")
        #expect(h.fired.isEmpty)
        let second = RunningTimers(try h.engine(group: "timers-restart"))
        #expect(try await h.eventually { h.fired.count >= scheduled.count })
        #expect(try await h.eventually { try await h.committedAll(group: "timers-restart") })
        try await second.stop()
        #expect(Set(h.fired.map(\.timer.id)) == Set(scheduled.map(\.id)) && h.fired.count == scheduled.count, "each once")
        #expect(h.fired.allSatisfy { $0.context.now >= $0.timer.due })
        await h.stop()
    }

    @Test("a member joining takes partitions before any record is released: the revoke gives waiting records up; all fire once their due")
    func revoke() async throws {
        let h = try TimerHarness(rate: 6)
        let slow: (inout TimerPipeline.Configuration) -> Void = {
            $0.engine.revokeTimeout = .seconds(60)
            $0.engine.consumer.assignmentStrategy = .range
        }
        let a = RunningTimers(try h.engine(group: "timers-revoke", configure: slow))
        #expect(try await h.warmUp(a.engine, group: "timers-revoke"))
        var scheduled: [TimerRecord] = []
        // First released from level 7 (128 virtual s) at 21.3 s real; due under a second later.
        for i in 0..<12 { scheduled.append(try await h.schedule(user: "v\(i)", dueIn: 128_000 + Int64(i) * 50, offset: Int64(i))) }
        let firstRelease = scheduled.map(\.release).min()!
        #expect(Set(scheduled.map { h.layout.bucket(key: $0.key) }) == [0, 1], "timers in both buckets")
        // Range: the joiner takes bucket 1 (partitions 8–15), whose records were waiting in the first member.
        #expect(try await h.eventually { a.engine.waiting == scheduled.count })
        let b = RunningTimers(try h.engine(group: "timers-revoke", configure: slow))
        #expect(try await h.eventually { !b.engine.assignment.isEmpty })
        #expect(h.now < firstRelease, "the revoke did not wait for the records' release: \(firstRelease - h.now) ms virtual to go")
        #expect(a.engine.waiting < scheduled.count, "the revoked partitions' records were given up")
        #expect(try await h.eventually { h.fired.count >= scheduled.count })
        #expect(try await h.eventually { try await h.committedAll(group: "timers-revoke") })
        try await a.stop()
        try await b.stop()
        #expect(Set(h.fired.map(\.timer.id)) == Set(scheduled.map(\.id)), "nothing lost")
        #expect(h.fired.allSatisfy { $0.context.now >= $0.timer.due }, "none early")
        await h.stop()
    }

    @Test("a topic whose partition count is not levels × buckets is refused at start")
    func partitionCount() async throws {
        let h = try TimerHarness(partitions: 5)
        await #expect(throws: Pipeline.Failure.self) { try await h.engine(group: "timers-count").run() }
        await h.stop()
    }
}
