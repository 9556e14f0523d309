import Foundation
import Kafka
import Pipeline
import Rules
import RulesStore
import Synchronization
import TestSupport
import Testing
import Threading

/// ``StatePartitionOwner`` on tansu with real rules stores (SQLite files): a cap and dedup
/// through one owner, a new owner restoring what an earlier one sent, the zombie fenced, and
/// events waiting for pushes in flight instead of guessing (docs/rules-state.md).
@Suite("The owner of a state partition: caps and dedup over tansu and a rules store")
struct StatePartitionOwnerTests {
    static let cap = CapRule(max: 1, per: 3_600_000, by: [.user])
    static let policy = RulesPolicy(sendLimit: 60_000)
    static let subject = CapSubject(user: "u", category: "social", mapping: "chat")

    /// tansu with a 2-partition changelog, a producer, and a folder for the owners' stores.
    struct Setup {
        let tansu: Tansu
        let producer: KafkaProducer
        let folder: TemporaryFolder

        static func start() async throws -> Setup {
            let tansu = try await Tansu.start()
            try await tansu.createTopic("rules-changelog", partitions: 2)
            var configuration = KafkaProducerConfiguration(bootstrapServers: [tansu.bootstrapServers])
            configuration.enableIdempotence = false
            configuration.properties["acks"] = "all"
            return Setup(tansu: tansu, producer: try KafkaProducer(configuration: configuration), folder: try TemporaryFolder())
        }

        /// An owner of partition 1 as member `member`, with a store file of its own.
        func owner(_ member: String) throws -> StatePartitionOwner<RulesStore> {
            let configuration = ChangelogPartition.Configuration(
                bootstrapServers: [tansu.bootstrapServers], topic: "rules-changelog", partition: 1, partitionCount: 2)
            let store = try RulesStore(path: folder.path("\(member).sqlite"))
            return StatePartitionOwner(configuration, owner: member, producer: producer, store: store) {
                Int64(Date().timeIntervalSince1970 * 1_000)
            }
        }
    }

    static func attempt(_ event: String, owner: String, targets: [String] = ["fid:a"], user: String = "u") -> NotificationAttempt {
        NotificationAttempt(
            notification: NotificationID(eventID: event, mapping: "chat", subject: user),
            subject: CapSubject(user: user, category: "social", mapping: "chat"), targets: targets, caps: [cap], dedupWindow: 3_600_000,
            policy: policy, owner: owner)
    }

    /// What the owners pushed, and FCM's answer to each: `accepted` unless told otherwise.
    final class FCM: Sendable {
        private let pushes = Mutex<[String]>([])
        let answer: PushAnswer

        init(answer: PushAnswer = .accepted) { self.answer = answer }

        @Sendable func send(_ targets: [String], until: Int64) async -> [String: PushAnswer] {
            pushes.withLock { $0 += targets }
            return Dictionary(uniqueKeysWithValues: targets.map { ($0, answer) })
        }

        var pushed: [String] { pushes.withLock { $0 } }
    }

    @Test("one owner: the first push is sent and recorded; another over the cap is capped; the first again is a duplicate; one push in all")
    func capAndDedup() async throws {
        let setup = try await Setup.start()
        let fcm = FCM()
        let owner = try setup.owner("a#1")
        let outcomes = try await owner.run { owner in
            [
                try await owner.push(Self.attempt("e1", owner: "a#1"), send: fcm.send),
                try await owner.push(Self.attempt("e2", owner: "a#1"), send: fcm.send),
                try await owner.push(Self.attempt("e1", owner: "a#1"), send: fcm.send),
            ]
        }
        guard case .recorded(let first) = outcomes[0] else { throw TestSupportError("e1: \(outcomes[0])") }
        #expect(first.status == .sent && first.devices.count == 1 && first.owner == "a#1")
        #expect(outcomes[1] == .capped(key: Self.cap.keys(of: Self.subject)[0], counted: 1))
        #expect(outcomes[2] == .duplicate)
        #expect(fcm.pushed == ["fid:a"])
        await setup.producer.close()
    }

    @Test("a new owner restores what the old one sent and counts it; the old one, a zombie now, is fenced and pushes nothing")
    func restoreAndFence() async throws {
        let setup = try await Setup.start()
        let fcm = FCM()
        let (a, b) = (try setup.owner("a#1"), try setup.owner("b#1"))
        try await a.run { a in
            #expect(try await a.push(Self.attempt("e1", owner: "a#1"), send: fcm.send) != .duplicate)
            try await b.run { b in
                #expect(
                    try await b.push(Self.attempt("e2", owner: "b#1"), send: fcm.send) == .capped(key: Self.cap.keys(of: Self.subject)[0], counted: 1)
                )
                #expect(try await b.push(Self.attempt("e1", owner: "b#1"), send: fcm.send) == .duplicate)
                // a still runs (evicted, it has not noticed): its next reservation, of another
                // user with room under the cap, lies after b's claim.
                let late = try await a.push(Self.attempt("e3", owner: "a#1", targets: ["fid:b"], user: "v"), send: fcm.send)
                guard case .fenced = late else { throw TestSupportError("the zombie's push: \(late)") }
            }
        }
        #expect(fcm.pushed == ["fid:a"])
        await setup.producer.close()
    }

    @Test("a cap full only with a push in flight: the next event waits for its outcome; released, the slot is free and the next one goes")
    func waitsForInFlight() async throws {
        let setup = try await Setup.start()
        let owner = try setup.owner("a#1")
        let gate = Gate()
        let fcm = FCM()
        let outcomes = try await owner.run { owner in
            async let first = owner.push(Self.attempt("e1", owner: "a#1")) { targets, _ in
                await gate.wait()
                return Dictionary(uniqueKeysWithValues: targets.map { ($0, .refused) })
            }
            // e2 may only decide once e1 has reserved (then its cap is full with e1 in flight).
            #expect(await eventually(timeout: .seconds(20)) { gate.waiting })
            async let second = owner.push(Self.attempt("e2", owner: "a#1", targets: ["fid:b"]), send: fcm.send)
            #expect(await eventually(timeout: .seconds(20)) { owner.waiting == 1 }, "e2 waits for e1's outcome")
            #expect(fcm.pushed.isEmpty)
            gate.open()
            return [try await first, try await second]
        }
        guard case .recorded(let released) = outcomes[0], case .recorded(let sent) = outcomes[1] else {
            throw TestSupportError("\(outcomes)")
        }
        #expect(released.status == .released, "every answer a definitive refusal: nothing delivered")
        #expect(sent.status == .sent && fcm.pushed == ["fid:b"])
        #expect(owner.waiting == 0)
        await setup.producer.close()
    }

    /// Holds a send until opened.
    final class Gate: Sendable {
        private let state = Mutex((open: false, waiting: false))
        private let signal = ChangeSignal()

        var waiting: Bool { state.withLock { $0.waiting } }

        func wait() async {
            state.withLock { $0.waiting = true }
            _ = await signal.wait { self.state.withLock { $0.open } }
        }

        func open() {
            state.withLock { $0.open = true }
            signal.notify()
        }
    }
}
