import Kafka
import Rules
import Synchronization
import Threading

/// One state partition's changelog, as its owner writes and follows it (docs/rules-state.md;
/// plan step 10 of docs/design/per-user-rules.md). Each ``StatePartitionOwner`` of the rules
/// engine has one, for the state partition it owns.
///
/// The owner ``follow(from:)``s the partition (a consumer of its own, no group), ``claim(at:)``s
/// it, and is restored once the tail has read its claim (``waitUntilRestored()``): every fact
/// before the claim is in its state by then. It writes its reservations and outcomes with
/// ``write(_:)`` and sends a reservation's pushes only after ``readBack(ofReservationAt:)`` says
/// `.clear`. The decisions are ``ChangelogTail``'s; this type moves the records.
///
/// The facts the tail admits go to `sink`, in offset order, from the task that follows. A
/// re-claim (``ChangelogTail/ReadBack/fenced(byClaimAt:)`` while the group still assigns the
/// partition): stop following, ``reclaim(as:)``, empty the state, follow from 0 again, claim.
public final class ChangelogPartition: Sendable {
    public struct Configuration: Sendable {
        public var bootstrapServers: [String]
        /// librdkafka properties of the tail's consumer (TLS, SASL, as the worker's).
        public var properties: [String: String] = [:]
        public var topic: String
        public var partition: Int32
        /// The partition count of the by-subject and changelog topics. A claim written with
        /// another count means subjects moved between state partitions: following stops.
        public var partitionCount: Int32

        public init(bootstrapServers: [String], topic: String, partition: Int32, partitionCount: Int32) {
            self.bootstrapServers = bootstrapServers
            self.topic = topic
            self.partition = partition
            self.partitionCount = partitionCount
        }
    }

    /// Facts the tail admitted, with their offsets, in order: a batch of what had arrived. What
    /// it throws stops the follower (a state that missed a fact must not decide).
    public typealias Sink = @Sendable (_ facts: [(offset: Int64, fact: Fact)]) throws -> Void

    /// The most records read and handed to `sink` at once.
    static let batch = 500

    /// The key of a claim record; facts are keyed by their notification (16 bytes).
    static let claimKey: [UInt8] = Array("\u{0}claim".utf8)

    public let configuration: Configuration
    private let producer: KafkaProducer
    private let writer: ChangelogWriter
    private let sink: Sink
    private let tail: Mutex<ChangelogTail>
    private let changed = ChangeSignal()
    private let readBacks = ReadBackWaiters()
    private let undecodable = Atomic<Int>(0)

    /// - Parameters:
    ///   - owner: this member's owner ID for its claim (member, generation, a nonce).
    ///   - producer: the worker's record producer (`acks=all`, not idempotent: facts merge).
    public init(_ configuration: Configuration, owner: String, producer: KafkaProducer, sink: @escaping Sink) {
        self.configuration = configuration
        self.producer = producer
        self.sink = sink
        tail = Mutex(ChangelogTail(owner: owner))
        writer = ChangelogWriter { facts throws(KafkaError) in
            let key: [UInt8]
            switch facts[0] {
            case .notification(let first): key = first.notification.bytes
            case .digest(let first): key = first.window.bytes
            case .claim: preconditionFailure("claims are written alone")
            }
            let record = KafkaProducerRecord(
                topic: configuration.topic, partition: configuration.partition, key: key, value: FactCodec.encodeRecord(facts))
            return try await producer.send(record).offset
        }
    }

    public var owner: String { tail.withLock { $0.owner } }

    /// Records read that were not facts (left out, counted).
    public var undecodableRecords: Int { undecodable.load(ordering: .relaxed) }

    /// Writes this member's claim of the partition: its offset.
    @discardableResult
    public func claim(at now: Int64) async throws(KafkaError) -> Int64 {
        let claim = Claim(at: now, owner: owner, partitionCount: configuration.partitionCount)
        let record = KafkaProducerRecord(
            topic: configuration.topic, partition: configuration.partition, key: Self.claimKey, value: FactCodec.encode(.claim(claim)))
        return try await producer.send(record).offset
    }

    /// Writes a fact of this member's: the offset of its record (a reservation's, for its
    /// read-back). Facts written while a record is in flight share the next one
    /// (``ChangelogWriter``); the record is keyed by its first fact's notification.
    public func write(_ fact: NotificationFact) async throws(KafkaError) -> Int64 {
        try await writer.write(.notification(fact))
    }

    /// Writes a digest fact of this member's (``DigestBook``): the offset of its record.
    public func write(digest fact: DigestFact) async throws(KafkaError) -> Int64 {
        try await writer.write(.digest(fact))
    }

    public enum FollowError: Error, Equatable, CustomStringConvertible {
        /// A claim was written when the topics had another partition count.
        case partitionCountChanged(claimedWith: Int32, now: Int32, atOffset: Int64)

        public var description: String {
            switch self {
            case .partitionCountChanged(let was, let now, let offset):
                "the rules changelog's claim at offset \(offset) was written with \(was) partitions, the topics have \(now) now: "
                    + "subjects would move between state partitions, so their caps and deduplication would not hold"
            }
        }
    }

    /// Reads the partition from `start` until cancelled (or the consumer fails), feeding the
    /// tail and `sink`, and waking those waiting for a read-back.
    public func follow(from start: Int64 = 0) async throws {
        // Reservations waiting for their read-back fail when the follower ends (their owner
        // stopped: a partition released, lost or given up), instead of waiting for ever.
        readBacks.open()
        defer { readBacks.close() }
        var consumerConfiguration = KafkaConsumerConfiguration(bootstrapServers: configuration.bootstrapServers)
        consumerConfiguration.properties = configuration.properties
        let consumer = try KafkaConsumer(configuration: consumerConfiguration)
        do {
            try consumer.assign([TopicPartitionOffset(topic: configuration.topic, partition: configuration.partition, offset: start)])
            for try await message in consumer.messages {
                try read([message] + consumer.takeBuffered(max: Self.batch - 1))
                if Task.isCancelled { break }
            }
        } catch {
            await consumer.close()
            throw error
        }
        await consumer.close()
    }

    /// Records of the changelog, in offset order.
    func read(_ messages: [KafkaMessage]) throws {
        defer {
            changed.notify()
            readBacks.advance(to: tail.withLock { $0.next })
        }
        var admitted: [(offset: Int64, fact: Fact)] = []
        for message in messages {
            guard let facts = try? FactCodec.decodeRecord(message.value) else {
                undecodable.add(1, ordering: .relaxed)
                tail.withLock { $0.skip(message.offset) }
                continue
            }
            for fact in facts {
                if case .claim(let c) = fact, c.partitionCount != configuration.partitionCount {
                    try sinkIfAny(admitted)
                    throw FollowError.partitionCountChanged(
                        claimedWith: c.partitionCount, now: configuration.partitionCount, atOffset: message.offset)
                }
                if tail.withLock({ $0.read(fact, at: message.offset) }) == .apply { admitted.append((message.offset, fact)) }
            }
        }
        try sinkIfAny(admitted)
    }

    private func sinkIfAny(_ facts: [(offset: Int64, fact: Fact)]) throws {
        if !facts.isEmpty { try sink(facts) }
    }

    /// Waits until the tail has read this member's claim: true. False if cancelled first.
    public func waitUntilRestored() async -> Bool {
        await changed.wait { tail.withLock { $0.restored } }
    }

    /// Waits until the tail has read past this member's reservation at `offset`: `.clear` (send)
    /// or `.fenced`. `.notYet` only if the task is cancelled first.
    public func readBack(ofReservationAt offset: Int64) async -> ChangelogTail.ReadBack {
        var verdict = ChangelogTail.ReadBack.notYet
        _ = await changed.wait {
            verdict = tail.withLock { $0.readBack(ofReservationAt: offset) }
            return verdict != .notYet
        }
        return verdict
    }

    /// Waits until the tail has read past `offset`: the tail as it was then (a reservation's
    /// read-back there is decided, ``NotificationAttempt/readBack(_:now:state:)``), and `sink`
    /// has had every fact it admitted up to it. Nil if the task is cancelled or the follower
    /// ends first.
    public func tail(pastOffset offset: Int64) async -> ChangelogTail? {
        guard await readBacks.wait(past: offset) else { return nil }
        return tail.withLock { $0 }
    }

    /// Whether the foreign claim at `offset` was made before this member's own and written late
    /// (``ChangelogTail/isLateClaim(atOffset:)``).
    public func isLateClaim(atOffset offset: Int64) -> Bool {
        tail.withLock { $0.isLateClaim(atOffset: offset) }
    }

    /// Forgets the claim for a new one under `owner` (``ChangelogTail/reclaim(as:)``); call with
    /// the follower stopped, then empty the state and follow from 0 again.
    public func reclaim(as owner: String) {
        tail.withLock { $0.reclaim(as: owner) }
        readBacks.reset()
    }
}
