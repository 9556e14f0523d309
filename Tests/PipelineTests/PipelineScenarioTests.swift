import FCM
import Foundation
import Kafka
import Logging
import Mapping
import Pipeline
import PipelineTestSupport
import TestSupport
import Testing

/// The reliability scenarios of the pipeline's glue (stop, revoke, commit outage, pause across
/// a re-assignment) against an in-memory consumer (``FakeMessageSource``) and FCM
/// (``FakeSender``): the real pipeline, reader, runners, commit loop and rebalance handlers,
/// without a broker. The same faults against real brokers: PipelineMockClusterTests and the
/// reliability suite.
///
/// One at a time: the flow storm's fake pauses take 1 ms each on the thread that asks, and beside it in
/// a loaded full run the commit-outage scenario starved past its 20 s waits (each takes well
/// under a second alone). And off the cooperative pool (``OnOwnExecutor``): in the first
/// minute of a full run a task waits behind hundreds of tests each time it resumes, and "stop
/// mid-stream" missed its 20 s `eventually` in full runs (twice in a row, once on CI).
@Suite("Pipeline scenarios without a broker", .serialized, .timeLimit(.minutes(1)), .onOwnExecutor)
struct PipelineScenarioTests {
    static let topic = "events"

    /// A pipeline on a fake source with `partitions` partitions of `perPartition` events each.
    struct World {
        let source: FakeMessageSource
        let sender = FakeSender()
        let pipeline: Pipeline
        let partitions: [TopicPartition]
        let perPartition: Int

        init(
            partitions count: Int32 = 4, perPartition: Int = 250, channelCapacity: Int = 8, pauseTime: TimeInterval = 0,
            configure: (inout Pipeline.Configuration) -> Void = { _ in }
        ) throws {
            var logger = Logger(label: "scenario")
            logger.logLevel = .critical
            let mappings = try MappingSet.load(files: [("test.yaml", WelcomeEvents.mapping)])
            let processor = EventProcessor(
                mappings: mappings, sender: sender, producer: FakeProducer(),
                options: EventProcessor.Options(deadLetterTopic: "dead-letter", tokenInvalidationTopic: "invalidations"),
                metrics: PipelineMetrics(), logger: logger)
            var configuration = Pipeline.Configuration(
                consumer: KafkaConsumerConfiguration(bootstrapServers: ["unused:9092"], groupID: "scenario"), topics: [PipelineScenarioTests.topic])
            configuration.commitInterval = .milliseconds(20)
            configure(&configuration)
            var made: FakeMessageSource?
            pipeline = try Pipeline(configuration: configuration, processor: processor, metrics: PipelineMetrics(), logger: logger) { handler in
                let source = FakeMessageSource(handler: handler, channelCapacity: channelCapacity, pauseTime: pauseTime)
                made = source
                return source
            }
            source = made!
            partitions = (0..<count).map { TopicPartition(topic: PipelineScenarioTests.topic, partition: $0) }
            self.perPartition = perPartition
            for p in partitions {
                source.append(p, (0..<perPartition).map { Array(Self.event(Self.token(p, $0)).utf8) })
            }
        }

        static func token(_ p: TopicPartition, _ offset: Int) -> String { "p\(p.partition)-\(offset)" }

        static func event(_ token: String) -> String {
            #"{"type":"user.welcome","id":"\#(token)","name":"N","token":"\#(token)"}"#
        }

        /// Per partition, how many events from offset 0 on were accepted by FCM without a gap.
        func acceptedPrefix() -> [TopicPartition: Int64] {
            let accepted = Set(sender.accepted)
            var prefix: [TopicPartition: Int64] = [:]
            for p in partitions {
                var n = 0
                while n < perPartition, accepted.contains(Self.token(p, n)) { n += 1 }
                prefix[p] = Int64(n)
            }
            return prefix
        }

        /// No committed offset passes an event FCM did not accept: nothing is lost.
        func nothingLost() -> Bool {
            let prefix = acceptedPrefix()
            return source.committedOffsets.allSatisfy { $0.value <= prefix[$0.key] ?? 0 }
        }

        var everythingCommitted: Bool {
            let committed = source.committedOffsets
            return partitions.allSatisfy { committed[$0] == Int64(perPartition) }
        }
    }

    @Test("these scenarios run on a thread of their own: the test, its child tasks, the tasks it starts, after a sleep")
    func onOwnThread() async throws {
        #expect(Self.threadName() == "pb.test.exec")
        try await Task.sleep(for: .milliseconds(1))
        #expect(Self.threadName() == "pb.test.exec")
        let child = await withTaskGroup(of: String.self) { group in
            group.addTask { Self.threadName() }
            return await group.next() ?? ""
        }
        #expect(child == "pb.test.exec")
        #expect(try await OnOwnExecutor.start { Self.threadName() }.value == "pb.test.exec")
    }

    /// The OS name of the calling thread (``ThreadExecutor``'s is `pb.test.exec`).
    static func threadName() -> String {
        let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        return name.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("stop mid-stream: what finished is committed exactly, nothing after the stop is taken, run returns")
    func stopMidStream() async throws {
        // At most 300 events in flight, and no partition paused on its own before that.
        let w = try World(channelCapacity: 50) { $0.limits = PartitionTable.Limits(maxEventsInFlight: 300, partitionBuffer: 1_000) }
        w.sender.hold(after: 0)
        let run = OnOwnExecutor.start { try await w.pipeline.run() }
        await w.source.assign(w.partitions)
        // 300 events taken (100 in a send, the fake's concurrency limit; 200 queued for a
        // runner): the worker is full, its partitions paused, and messages fetched before the
        // pause wait in the consumer's channel.
        #expect(await eventually { w.sender.started == 100 && w.source.paused.count == 4 })
        try #require(await eventually { w.source.buffered > 0 }, "messages wait in the consumer's channel")
        w.pipeline.stop()
        let deliveredAtStop = w.source.delivered
        try await Task.sleep(for: .milliseconds(50))
        w.sender.release()  // the sends in flight finish within the shutdown timeout
        try await run.value
        let sent = w.sender.accepted.count
        // The reader, cancelled, takes at most the message it was waiting for and drops it; the
        // rest of the consumer's channel stays there for the next owner.
        #expect(w.source.delivered <= deliveredAtStop + 1, "\(w.source.delivered - deliveredAtStop) messages taken after stop()")
        #expect(sent == 300 && sent == w.sender.started, "every event taken finished, and only those (\(sent) sent)")
        #expect(w.source.committedOffsets == w.acceptedPrefix(), "everything done is committed at the stop, and nothing more")
        try await Task.sleep(for: .milliseconds(100))
        #expect(w.sender.accepted.count == sent, "nothing is sent after run() returned")
    }

    @Test("cancelling the task that runs the pipeline stops it: sends under way end, what finished is committed, run returns")
    func cancelled() async throws {
        let w = try World { $0.revokeTimeout = .seconds(120) }
        w.sender.hold(after: 200)
        let run = OnOwnExecutor.start { try await w.pipeline.run() }
        await w.source.assign(w.partitions)
        #expect(await eventually { w.sender.started > 200 && w.sender.accepted.count == 200 })
        let cancelled = ContinuousClock.now
        run.cancel()  // the held sends see the cancellation and end as abandoned
        try await run.value
        // The revoke that closing the consumer runs does not wait for the abandoned events.
        #expect(ContinuousClock.now - cancelled < .seconds(60), "run() returned without waiting out the revoke timeout")
        #expect(!w.pipeline.isRunning)
        #expect(w.source.committedOffsets == w.acceptedPrefix(), "what finished is committed, and nothing more")
        #expect(w.sender.accepted.count == 200)
        let delivered = w.source.delivered
        try await Task.sleep(for: .milliseconds(100))
        #expect(w.source.delivered == delivered && w.sender.accepted.count == 200, "nothing taken or sent after run() returned")
    }

    @Test("stop while sends hang: run returns after the shutdown timeout; what did not finish is not committed")
    func stopWithHungSends() async throws {
        let w = try World { $0.shutdownTimeout = .milliseconds(300) }
        w.sender.hold(after: 100)
        let run = OnOwnExecutor.start { try await w.pipeline.run() }
        await w.source.assign(w.partitions)
        #expect(await eventually { w.sender.accepted.count >= 100 })
        w.pipeline.stop()
        try await run.value
        #expect(w.nothingLost())
        #expect(!w.everythingCommitted)
        w.sender.release()
    }

    @Test("revoke with events queued past the revoke timeout: they are not sent after the revoke, nothing is lost, the next owner gets them")
    func revokeWithQueuedEvents() async throws {
        let w = try World {
            $0.maxEventsRunning = 2  // two runners: the rest of what is taken waits in the queue
            $0.revokeTimeout = .milliseconds(100)
        }
        w.sender.hold(after: 50)  // then both runners wait in a send, and taken events pile up
        let run = OnOwnExecutor.start { try await w.pipeline.run() }
        await w.source.assign(w.partitions)
        #expect(await eventually { w.sender.started == 52 })
        try await Task.sleep(for: .milliseconds(50))
        let p0 = w.partitions[0]
        await w.source.revoke([p0])  // the drain times out: p0's queued events are given up
        #expect(!w.pipeline.assignment.contains(p0))
        #expect(w.nothingLost())
        let p0Sent = w.sender.accepted.filter { $0.hasPrefix("p0-") }.count
        w.sender.release()
        #expect(await eventually { w.sender.accepted.count >= 300 })
        let p0After = w.sender.accepted.filter { $0.hasPrefix("p0-") }.count - p0Sent
        #expect(p0After <= 2, "only the sends already under way finish; p0's queued events belong to the next owner (\(p0After) sent)")

        await w.source.assign([p0])  // this worker is the next owner
        #expect(await eventually { w.everythingCommitted })
        #expect(Set(w.sender.accepted).count == 1_000, "every event sent")
        #expect(w.nothingLost())
        w.pipeline.stop()
        try await run.value
    }

    @Test("a commit outage: the worker stops taking events at the uncommitted bound, then commits everything, each event sent once")
    func commitOutage() async throws {
        let w = try World {
            $0.limits.maxEventsInFlight = 40
            $0.commitEveryEvents = 10
        }
        w.source.failCommits(1_000_000)
        let run = OnOwnExecutor.start { try await w.pipeline.run() }
        await w.source.assign(w.partitions)
        #expect(await eventually { w.source.failedCommits >= 1 })
        // Once a commit failed, the worker takes nothing new while events in flight plus those
        // done since the last commit are at maxUncommittedEvents (maxEventsInFlight +
        // commitEveryEvents, Pipeline.init): what a crash now would send again stays bounded.
        // Counted in commits that keep failing, not in time (a loaded machine is slow).
        let failures = w.source.failedCommits
        #expect(await eventually { w.source.failedCommits >= failures + 2 })
        let taken = w.source.delivered
        #expect(await eventually { w.source.failedCommits >= failures + 5 })
        #expect(w.source.delivered == taken && taken < 1_000, "\(w.source.delivered - taken) messages taken while commits fail")
        #expect(w.source.committedOffsets.isEmpty)
        w.source.failCommits(0)
        #expect(await eventually { w.everythingCommitted })
        #expect(w.sender.accepted.count == 1_000 && Set(w.sender.accepted).count == 1_000, "each event sent exactly once")
        w.pipeline.stop()
        try await run.value
    }

    @Test("a storm of pauses and resumes from the reader and the runners at once: no partition is left paused")
    func flowStorm() async throws {
        // Two events in flight per partition, eight in all: nearly every event pauses or resumes
        // its partition, from the reader (receive) and the runners (finish) concurrently. A pause
        // takes 1 ms to take effect (librdkafka waits for its broker thread), so a resume
        // computed after it can be applied before it: a loaded machine did that by preempting.
        let w = try World(partitions: 8, perPartition: 60, pauseTime: 0.001) {
            $0.limits = PartitionTable.Limits(maxEventsInFlight: 8, partitionBuffer: 2)
            $0.maxEventsRunning = 8
        }
        let run = OnOwnExecutor.start { try await w.pipeline.run() }
        await w.source.assign(w.partitions)
        // Each pause blocks the thread that asks for 1 ms: in a full parallel test run that is slow.
        #expect(await eventually(timeout: .seconds(90)) { w.everythingCommitted }, "\(w.source.committedOffsets); paused: \(w.source.paused)")
        #expect(w.source.paused.isEmpty)
        w.pipeline.stop()
        try await run.value
    }

    @Test("a partition revoked while paused and assigned again is read again: not left paused, nothing lost")
    func reassignedWhilePaused() async throws {
        let w = try World {
            $0.limits = PartitionTable.Limits(maxEventsInFlight: 400, partitionBuffer: 20)
            $0.revokeTimeout = .milliseconds(200)
        }
        w.sender.hold()  // nothing finishes: every partition reaches its buffer and is paused
        let run = OnOwnExecutor.start { try await w.pipeline.run() }
        await w.source.assign(w.partitions)
        let p0 = w.partitions[0]
        #expect(await eventually { w.source.paused.contains(p0) }, "p0 paused at its buffer")
        await w.source.revoke([p0])
        #expect(!w.source.paused.contains(p0))
        w.sender.release()
        await w.source.assign([p0])
        #expect(await eventually { w.everythingCommitted }, "\(w.source.committedOffsets)")
        #expect(w.source.paused.isEmpty)
        #expect(w.nothingLost())
        w.pipeline.stop()
        try await run.value
    }
}
