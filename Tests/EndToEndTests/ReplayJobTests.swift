import FCMEmulator
import Foundation
import Jobs
import Kafka
import Logging
import Mapping
import Operations
import Pipeline
import ServiceLifecycle
import Synchronization
import TestSupport
import Testing

/// `ReplayJob` in this process under a `ServiceGroup`, as `pushbridge replay` runs it, against
/// the mock cluster (right watermarks, commits) and the emulator. The group's graceful shutdown
/// is what SIGINT and SIGTERM trigger in the command.
@Suite("ReplayJob under a ServiceGroup (in process, mock cluster, the emulator)", .serialized)
struct ReplayJobTests {
    @Test("a range to its end: the plan is reported first, each event is sent once, the end is committed to the replay's group, run returns")
    func complete() async throws {
        let e2e = try await EndToEnd(partitions: 2, broker: .mock)
        let tokens = try await e2e.produce(30, prefix: "j")
        let reporter = RecordingReporter()
        let job = try Self.job(e2e, from: .earliest, reporter: reporter)

        try await Self.serviceGroup(job).run()
        let outcome = try #require(job.outcome)
        #expect(outcome.summary.isComplete && !outcome.interrupted)
        #expect(outcome.summary.progress.sent == 30 && outcome.summary.progress.done == 30, "\(outcome.summary.progress); \(reporter.events)")
        #expect(e2e.acceptedTokens == Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }))
        #expect(try await e2e.committed(group: "backfill") == e2e.events.producedEnds)
        #expect(Array(reporter.events.prefix(2)) == ["planned", "fcm clients ready"])
        #expect(!reporter.events.contains("stopping"))
        await e2e.stop()
    }

    @Test(
        "a graceful shutdown mid-replay: the reading stops, the events in flight finish, what finished is committed and reported, run returns"
    )
    func gracefulShutdown() async throws {
        var faults = EmulatorFaults()
        // At least 11 s for the whole range (4 in flight × 150 ms): the shutdown comes with the
        // first progress report, 2 s in, however loaded the machine.
        faults.latencyMilliseconds = 150
        let e2e = try await EndToEnd(partitions: 2, faults: faults, broker: .mock)
        try await e2e.produce(300, prefix: "s")
        let reporter = RecordingReporter()
        let job = try Self.job(e2e, from: .earliest, maxInFlight: 4, reporter: reporter)
        let group = Self.serviceGroup(job)

        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            for await _ in reporter.progressed { break }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        let outcome = try #require(job.outcome)
        let summary = outcome.summary
        let seen =
            "interrupted \(outcome.interrupted), complete \(summary.isComplete), \(summary.progress), resume \(summary.resume), reported \(reporter.events)"
        #expect(outcome.interrupted && !summary.isComplete && summary.failure == nil, "\(seen)")
        #expect(reporter.events.filter { $0 == "stopping" }.count == 1)
        let accepted = e2e.acceptedTokens
        #expect(accepted.count < 300, "stopped before the end")
        #expect(accepted.values.allSatisfy { $0 == 1 })
        // The events in flight finished: none was left unfinished, none abandoned.
        #expect(summary.progress.unfinished == 0)
        #expect(summary.progress.sent == Int64(accepted.count))

        // Committed: per partition, the first event not sent (where a resume starts), or the end.
        let committed = try await e2e.committed(group: "backfill")
        let expected = Dictionary(
            uniqueKeysWithValues: outcome.plan.ranges.map { ($0.partition.partition, summary.resume[$0.partition] ?? $0.end) })
        #expect(committed == expected)
        let below = try await e2e.events.keys(in: committed.mapValues { 0..<$0 })
        #expect(
            below == Set(accepted.keys),
            "exactly the events below the commit were sent: \(below.subtracting(accepted.keys).count) below it not sent, \(Set(accepted.keys).subtracting(below).count) sent above it; \(seen)"
        )
        await e2e.stop()
    }

    @Test(
        "FCM answers slower than the idle check with every slot taken: the consumer's fetched-ahead position ends no range early, every event is sent once"
    )
    func slowAnswersEndNoRangeEarly() async throws {
        var faults = EmulatorFaults()
        // 2.5 s per answer, two in flight: the reader waits for room longer than the 2 s idle
        // check while the consumer has fetched the whole range ahead.
        faults.latencyMilliseconds = 2_500
        let e2e = try await EndToEnd(partitions: 1, faults: faults, broker: .mock)
        let tokens = try await e2e.produce(6, prefix: "slow")
        let job = try Self.job(e2e, from: .earliest, maxInFlight: 2, reporter: RecordingReporter())
        try await Self.serviceGroup(job).run()
        let outcome = try #require(job.outcome)
        #expect(outcome.summary.isComplete && outcome.summary.progress.sent == 6, "\(outcome.summary.progress)")
        #expect(e2e.acceptedTokens == Dictionary(uniqueKeysWithValues: tokens.map { ($0, 1) }))
        #expect(try await e2e.committed(group: "backfill") == e2e.events.producedEnds)
        await e2e.stop()
    }

    @Test("a graceful shutdown before the first read (a signal while it plans): nothing is sent, and the whole plan is left to resume")
    func shutdownBeforeReading() async throws {
        let e2e = try await EndToEnd(partitions: 2, broker: .mock)
        try await e2e.produce(10, prefix: "b")
        let reporter = RecordingReporter()
        let job = try Self.job(e2e, from: .offset(2), reporter: reporter)
        let group = Self.serviceGroup(job)

        await group.triggerGracefulShutdown()  // before the job starts: it plans, then stops at once
        try await group.run()
        let outcome = try #require(job.outcome)
        #expect(outcome.interrupted && outcome.summary.progress.done == 0)
        let starts = Dictionary(uniqueKeysWithValues: outcome.plan.ranges.filter { !$0.isEmpty }.map { ($0.partition, $0.start) })
        #expect(outcome.summary.resume == starts && starts.values.allSatisfy { $0 == 2 })
        #expect(e2e.emulator.messages.isEmpty)
        #expect(reporter.events.first == "planned" && reporter.events.contains("stopping"))
        await e2e.stop()
    }

    @Test("a request the topic cannot meet: run throws the job's failure (bad input) through the group, and nothing is read")
    func badInput() async throws {
        let e2e = try await EndToEnd(partitions: 2, broker: .mock)
        var request = ReplayJob.Request(topic: e2e.topic, from: .earliest)
        request.partitions = [7]
        let reporter = RecordingReporter()
        let job = try Self.job(e2e, request, reporter: reporter)

        let failure = await #expect(throws: ReplayJob.Failure.self) { try await Self.serviceGroup(job).run() }
        #expect(failure?.kind == .badInput)
        #expect(failure?.description == "topic events has partitions 0, 1; no partition 7")
        #expect(job.outcome == nil && reporter.events.isEmpty)
        await e2e.stop()
    }

    // MARK: Helpers

    /// A replay of `e2e.topic` from `from` to the high watermark, committing to `backfill`.
    static func job(_ e2e: EndToEnd, from: OffsetPosition, maxInFlight: Int = 1_000, reporter: RecordingReporter) throws -> ReplayJob {
        var request = ReplayJob.Request(topic: e2e.topic, from: from)
        request.commitGroup = "backfill"
        request.maxEventsInFlight = maxInFlight
        return try job(e2e, request, reporter: reporter)
    }

    /// The job as `pushbridge replay --config` builds it: the config file of a worker of `prod`.
    static func job(_ e2e: EndToEnd, _ request: ReplayJob.Request, reporter: RecordingReporter) throws -> ReplayJob {
        let settings = try PushbridgeConfig.load(file: try e2e.config(group: "prod", httpPort: try FreePort.next()))
        let mappings = try MappingSet.load(files: try MappingFiles.read(settings.mappings))
        return ReplayJob(settings: settings, mappings: mappings, request: request, reporter: reporter, logger: Logger(label: "test.replay"))
    }

    /// The group `pushbridge replay` runs the job in, without its signals.
    static func serviceGroup(_ job: ReplayJob) -> ServiceGroup {
        ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [
                    .init(service: job, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup)
                ],
                logger: Logger(label: "test.replay")))
    }
}

/// What a job reported, in order; each progress report is also an element of ``progressed``.
final class RecordingReporter: ReplayReporter {
    private let recorded = Mutex<[String]>([])
    let progressed: AsyncStream<Void>
    private let progressContinuation: AsyncStream<Void>.Continuation

    init() { (progressed, progressContinuation) = AsyncStream.makeStream() }

    var events: [String] { recorded.withLock { $0 } }

    func planned(_ plan: ReplayPlan) { record("planned") }
    func fcmClientsReady() { record("fcm clients ready") }
    func progress(_ progress: ReplayProgress, elapsedSeconds: Double) {
        record("progress")
        progressContinuation.yield()
    }
    func stopping() { record("stopping") }

    private func record(_ event: String) { recorded.withLock { $0.append(event) } }
}
