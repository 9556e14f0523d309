import Foundation
import Kafka
import Pipeline
import Rules
import RulesStore
import Synchronization
import TestSupport
import Testing

/// ``RulesEngine`` on tansu with a real rules store: owners started and stopped with the
/// partitions assigned and released, and notifications past their expiry swept from the store.
@Suite("The rules engine: owners per partition held, and the expiry sweep (tansu, SQLite)")
struct RulesEngineTests {
    /// Milliseconds since 1970, moved by the test.
    final class Clock: Sendable {
        private let ms = Atomic<Int64>(1_800_000_000_000)
        func now() -> Int64 { ms.load(ordering: .relaxed) }
        func advance(_ by: Int64) { ms.add(by, ordering: .relaxed) }
    }

    static func attempt(_ event: String) -> NotificationAttempt {
        NotificationAttempt(
            notification: NotificationID(eventID: event, mapping: "chat", subject: "u"),
            subject: CapSubject(user: "u", category: nil, mapping: "chat"),
            targets: ["fid:a"], caps: [], dedupWindow: 3_600_000, policy: RulesPolicy(sendLimit: 60_000), owner: "")
    }

    /// An engine of member "test" over a 2-partition changelog topic on `tansu`, its store in
    /// `folder`, its clock moved by the test.
    static func engine(
        on tansu: Tansu, in folder: TemporaryFolder, sweepEvery sweep: Duration = .seconds(10)
    ) async throws -> (KafkaProducer, RulesStore, Clock, RulesEngine<RulesStore>) {
        try await tansu.createTopic("changelog", partitions: 2)
        var producerConfiguration = KafkaProducerConfiguration(bootstrapServers: [tansu.bootstrapServers])
        producerConfiguration.enableIdempotence = false
        let producer = try KafkaProducer(configuration: producerConfiguration)
        let store = try RulesStore(path: folder.path("rules.sqlite"))
        let clock = Clock()
        var configuration = RulesEngine<RulesStore>.Configuration(
            bootstrapServers: [tansu.bootstrapServers], changelogTopic: "changelog", partitioner: .consistent, member: "test")
        configuration.sweepInterval = sweep
        return (producer, store, clock, RulesEngine(configuration, producer: producer, store: store, clock: clock.now))
    }

    @Test(
        "a push goes through the owner of its partition once restored; a repeat is a duplicate until its expiry passes and the sweep deletes it; a released partition has no owner"
    )
    func ownersAndSweep() async throws {
        let (tansu, folder) = (try await Tansu.start(), try TemporaryFolder())
        let (producer, store, clock, engine) = try await Self.engine(on: tansu, in: folder, sweepEvery: .milliseconds(100))
        let running = Task { try await engine.run() }
        engine.assigned([1], partitionCount: 2)
        let sent = Mutex(0)
        let send: @Sendable ([String], Int64) async -> [String: PushAnswer] = { targets, _ in
            sent.withLock { $0 += 1 }
            return Dictionary(uniqueKeysWithValues: targets.map { ($0, .accepted) })
        }
        let first = try await engine.push(Self.attempt("e1"), partition: 1, send: send)
        guard case .recorded(let fact) = first, fact.status == .sent else { throw TestSupportError("e1: \(first)") }
        #expect(try await engine.push(Self.attempt("e1"), partition: 1, send: send) == .duplicate)
        #expect(try store.state(of: Self.attempt("e1").notification) != nil)

        // Past the dedup window and the send limit: the sweep deletes it, and e1 may go again.
        clock.advance(2 * 3_600_000)
        #expect(try await eventually(timeout: .seconds(30)) { try store.state(of: Self.attempt("e1").notification) == nil })
        guard case .recorded = try await engine.push(Self.attempt("e1"), partition: 1, send: send) else { throw TestSupportError("e1 again") }
        #expect(sent.withLock { $0 } == 2)

        engine.released([1])
        await #expect(throws: RulesEngineError.notOwned) { try await engine.push(Self.attempt("e2"), partition: 1, send: send) }
        await #expect(throws: RulesEngineError.notOwned) { try await engine.push(Self.attempt("e3"), partition: 0, send: send) }
        running.cancel()
        _ = await running.result
        await producer.close()
    }

    @Test(
        "a claim made before ours and written late: the push is fenced, unsent; the engine claims again, restores, and sends it. A claim made after ours: fenced, and no claim again"
    )
    func reclaimAfterLateClaim() async throws {
        let (tansu, folder) = (try await Tansu.start(), try TemporaryFolder())
        let (producer, store, clock, engine) = try await Self.engine(on: tansu, in: folder)
        let running = Task { try await engine.run() }
        engine.assigned([1], partitionCount: 2)
        let sent = Mutex<[String]>([])
        let send: @Sendable ([String], Int64) async -> [String: PushAnswer] = { targets, _ in
            sent.withLock { $0 += targets }
            return Dictionary(uniqueKeysWithValues: targets.map { ($0, .accepted) })
        }
        guard case .recorded = try await engine.push(Self.attempt("e1"), partition: 1, send: send) else { throw TestSupportError("e1") }
        // A member that held the partition before writes its claim now (its produce was late),
        // and a reservation of its own after it, which counts: it was not fenced.
        let late = Claim(at: clock.now() - 1_000, owner: "other:1:1:7", partitionCount: 2)  // made before ours
        let lateReservation = NotificationFact(
            notification: Self.attempt("e9").notification, status: .reserved, attempt: 1, at: clock.now(), expires: clock.now() + 3_600_000,
            owner: "other:1:1:7", subject: Self.attempt("e9").subject)
        for fact in [Fact.claim(late), .notification(lateReservation)] {
            _ = try await producer.send(KafkaProducerRecord(topic: "changelog", partition: 1, key: [1], value: FactCodec.encode(fact)))
        }
        let second = try await engine.push(Self.attempt("e2"), partition: 1, send: send)
        guard case .recorded(let fact) = second, fact.status == .sent else { throw TestSupportError("e2: \(second)") }
        #expect(sent.withLock { $0 } == ["fid:a", "fid:a"], "e1 and e2 once each: the fenced attempt sent nothing")
        #expect(try store.state(of: Self.attempt("e9").notification)?.status == .reserved, "the late claimer's reservation is restored")
        #expect(try await engine.push(Self.attempt("e1"), partition: 1, send: send) == .duplicate, "the state before the re-claim is restored")

        // A claim made after ours: another member holds the partition now. This one is fenced
        // and stops (no claim again, which would fence that member in turn).
        let newer = try await producer.send(
            KafkaProducerRecord(
                topic: "changelog", partition: 1, key: [1],
                value: FactCodec.encode(.claim(Claim(at: clock.now() + 1_000, owner: "next:1:1:9", partitionCount: 2)))))
        let third = try await engine.push(Self.attempt("e3"), partition: 1, send: send)
        #expect(third == .fenced(byClaimAt: newer.offset), "\(third)")
        #expect(sent.withLock { $0 }.count == 2, "nothing more sent")
        running.cancel()
        _ = await running.result
        await producer.close()
    }
}
