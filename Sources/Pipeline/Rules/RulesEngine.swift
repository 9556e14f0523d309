import Dates
import Kafka
import Rules
import Synchronization
import Threading

/// What the pipeline needs of the rules engine (``RulesEngine``): owners for the partitions it
/// holds, and a notification taken through its partition's owner.
public protocol StatefulRulesEngine: Sendable {
    /// How the source's producers partition by subject (direct mode, docs/rules.md).
    var partitioner: KafkaPartitioner { get }
    /// Where the owners' claims and facts go: as many partitions as the source.
    var changelogTopic: String { get }
    /// The partition `key` belongs in among the source's partitions; nil before the first
    /// assignment said how many there are.
    func partition(of key: [UInt8]) -> Int32?
    /// Owners start for `partitions` of the source, which has `partitionCount` partitions.
    func assigned(_ partitions: [Int32], partitionCount: Int32)
    /// `partitions` are being revoked: events waiting for their owner's restore give up now
    /// (the next owner takes them), so the revoke's drain does not wait for a restore; pushes
    /// under way finish.
    func revoking(_ partitions: [Int32])
    /// Their owners stop (their events drained or given up).
    func released(_ partitions: [Int32])
    /// Takes `attempt` through the owner of `partition`, once that owner has restored its
    /// state. Throws ``RulesEngineError/notOwned`` when the partition is not (or no longer)
    /// owned here, and what Kafka or the store throws.
    func push(
        _ attempt: NotificationAttempt, partition: Int32, send: @Sendable (_ targets: [String], _ until: Int64) async -> [String: PushAnswer]
    ) async throws -> StatefulOutcome
    /// Runs the owners until cancelled; ends by throwing what stopped an owner for good (a
    /// store that cannot be written, a changelog claimed with another partition count).
    /// Takes an event of a digest mapping through the owner of `partition`
    /// (``StatePartitionOwner/digest(_:sendFirst:)``); throws ``RulesEngineError/notOwned``
    /// when this member does not hold it.
    func digest(_ request: DigestRequest, partition: Int32, sendFirst: @Sendable () async -> Bool) async throws -> DigestJoin?
    /// What sends a digest window's push at its end; set before the partitions are assigned.
    func setDigestCloser(_ closer: @escaping DigestCloser)
    func run() async throws
}

public enum RulesEngineError: Error, Equatable {
    /// The partition is not owned here (revoked or lost while its event waited).
    case notOwned
}

/// Runs one ``StatePartitionOwner`` per source partition this worker holds (direct mode: the
/// source is keyed by subject, so a partition is a state partition; docs/rules.md). On
/// assignment an owner restores its partition's state from the changelog and claims it; events
/// of that partition wait for the restore, not the others'. On revoke or loss it stops.
public final class RulesEngine<Store: RulesStateStore>: StatefulRulesEngine {
    public struct Configuration: Sendable {
        public var bootstrapServers: [String]
        /// librdkafka properties of the changelog's consumers (TLS, SASL, as the worker's).
        public var properties: [String: String] = [:]
        /// `rules.changelog_topic`: as many partitions as the source.
        public var changelogTopic: String
        public var partitioner: KafkaPartitioner
        /// This worker's name in its owners' IDs (with the partition and a nonce).
        public var member: String
        /// How often notifications past their expiry leave the store (at most `sweepBatch` rows
        /// per transaction, as many as expired).
        public var sweepInterval: Duration = .seconds(10)
        public var sweepBatch = 1_000

        public init(bootstrapServers: [String], changelogTopic: String, partitioner: KafkaPartitioner, member: String) {
            self.bootstrapServers = bootstrapServers
            self.changelogTopic = changelogTopic
            self.partitioner = partitioner
            self.member = member
        }
    }

    private struct Slot {
        let owner: StatePartitionOwner<Store>
        var restored = false
        /// Being revoked: no new event waits for its restore.
        var revoking = false
        var stopping = false
    }

    private struct State {
        var slots: [Int32: Slot] = [:]
        var partitionCount: Int32?
        var claims = 0
        var closer: DigestCloser?
        /// Partitions whose owner is running (following its changelog into the store).
        var running: Set<Int32> = []
    }

    public let configuration: Configuration
    private let producer: KafkaProducer
    private let store: Store
    private let clock: @Sendable () -> Int64
    private let wall: any WallClock
    private let state = Mutex(State())
    private let changed = ChangeSignal()
    private let starts: AsyncStream<StatePartitionOwner<Store>>
    private let startsContinuation: AsyncStream<StatePartitionOwner<Store>>.Continuation

    /// - Parameters:
    ///   - producer: writes claims and facts (`acks=all`, not idempotent: facts merge).
    ///   - clock: milliseconds since 1970, the facts' times.
    /// - Parameter wall: the clock digest windows are closed by (`clock` reads the same time).
    public init(
        _ configuration: Configuration, producer: KafkaProducer, store: Store, wall: any WallClock = SystemWallClock(),
        clock: @escaping @Sendable () -> Int64
    ) {
        self.configuration = configuration
        self.producer = producer
        self.store = store
        self.wall = wall
        self.clock = clock
        (starts, startsContinuation) = AsyncStream.makeStream()
    }

    public var partitioner: KafkaPartitioner { configuration.partitioner }
    public var changelogTopic: String { configuration.changelogTopic }

    public func partition(of key: [UInt8]) -> Int32? {
        guard let count = state.withLock({ $0.partitionCount }) else { return nil }
        return partitioner.partition(of: key, count: count)
    }

    public func assigned(_ partitions: [Int32], partitionCount: Int32) {
        let started = state.withLock { state -> [StatePartitionOwner<Store>] in
            state.partitionCount = partitionCount
            return partitions.compactMap { p in
                guard state.slots[p] == nil || state.slots[p]!.stopping else { return nil }
                return newOwner(p, partitionCount: partitionCount, &state)
            }
        }
        for owner in started { startsContinuation.yield(owner) }
    }

    /// A new owner of `partition`, under an owner ID of its own, in its slot (not restored yet);
    /// the caller yields it to ``run()``.
    private func newOwner(_ partition: Int32, partitionCount: Int32, _ state: inout State) -> StatePartitionOwner<Store> {
        state.claims += 1
        var changelog = ChangelogPartition.Configuration(
            bootstrapServers: configuration.bootstrapServers, topic: configuration.changelogTopic, partition: partition,
            partitionCount: partitionCount)
        changelog.properties = configuration.properties
        let owner = StatePartitionOwner(
            changelog, owner: "\(configuration.member):\(partition):\(state.claims):\(UInt32.random(in: .min ... .max))",
            producer: producer, store: store, clock: clock, closer: state.closer, wall: wall)
        state.slots[partition] = Slot(owner: owner)
        return owner
    }

    /// `fenced`, the owner of `partition`, met a claim made before its own but written after it
    /// while this worker still holds the partition (its writer had the partition before and
    /// lost it). It claims again under a new owner ID and restores from the changelog's start
    /// (``ChangelogTail/reclaim(as:)``: the late claimer's reservations count). Only for such a
    /// claim: two members re-claiming in turn would restore again and again. True when the
    /// partition has an owner here to try again with.
    private func reclaim(_ partition: Int32, fenced: StatePartitionOwner<Store>) -> Bool {
        let started = state.withLock { state -> (again: Bool, owner: StatePartitionOwner<Store>?) in
            guard let slot = state.slots[partition], !slot.stopping, !slot.revoking, let count = state.partitionCount else { return (false, nil) }
            guard slot.owner === fenced else { return (true, nil) }  // another push re-claimed already
            return (true, newOwner(partition, partitionCount: count, &state))
        }
        if let owner = started.owner {
            startsContinuation.yield(owner)
            changed.notify()  // the fenced owner's run ends
        }
        return started.again
    }

    public func revoking(_ partitions: [Int32]) {
        state.withLock { state in
            for p in partitions { state.slots[p]?.revoking = true }
        }
        changed.notify()
    }

    public func released(_ partitions: [Int32]) {
        state.withLock { state in
            for p in partitions { state.slots[p]?.stopping = true }
        }
        changed.notify()
    }

    /// How often one push claims its partition again after being fenced while this worker
    /// still holds it, before it is left not done.
    static var reclaimsPerPush: Int { 3 }

    public func push(
        _ attempt: NotificationAttempt, partition: Int32, send: @Sendable ([String], Int64) async -> [String: PushAnswer]
    ) async throws -> StatefulOutcome {
        for _ in 0..<Self.reclaimsPerPush {
            let owner = try await restoredOwner(partition)
            let outcome = try await owner.push(attempt, send: send)
            // Fenced, nothing was sent. By a claim made before ours and written late, with the
            // partition still held here: claim it again. By a later claim: another member holds
            // the partition now, and this one stops (the event is left to it).
            guard case .fenced(let claim) = outcome, owner.changelog.isLateClaim(atOffset: claim), reclaim(partition, fenced: owner) else {
                return outcome
            }
        }
        return try await restoredOwner(partition).push(attempt, send: send)
    }

    /// The owner of `partition` once it has restored its state. Throws
    /// ``RulesEngineError/notOwned`` when the partition is not held here (or is being revoked
    /// before its owner restored).
    public func digest(_ request: DigestRequest, partition: Int32, sendFirst: @Sendable () async -> Bool) async throws -> DigestJoin? {
        try await restoredOwner(partition).digest(request, sendFirst: sendFirst)
    }

    public func setDigestCloser(_ closer: @escaping DigestCloser) {
        state.withLock { $0.closer = closer }
    }

    private func restoredOwner(_ partition: Int32) async throws -> StatePartitionOwner<Store> {
        var owner: StatePartitionOwner<Store>?
        _ = await changed.wait {
            owner = nil
            return state.withLock { state in
                guard let slot = state.slots[partition], !slot.stopping, slot.restored || !slot.revoking else { return true }
                owner = slot.restored ? slot.owner : nil
                return slot.restored
            }
        }
        guard let owner else {
            if Task.isCancelled { throw CancellationError() }
            throw RulesEngineError.notOwned
        }
        return owner
    }

    public func run() async throws {
        defer {
            startsContinuation.finish()
            state.withLock { $0.slots.removeAll() }
            changed.notify()
        }
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { try await self.sweepExpired() }
            for await owner in starts {
                group.addTask { try await self.own(owner) }
            }
        }
    }

    /// Deletes notifications past their expiry from the store every ``Configuration/sweepInterval``
    /// until cancelled: without it the file would keep every notification ever decided. A store
    /// that cannot be written stops the engine.
    private func sweepExpired() async throws {
        while true {
            do {
                try await Task.sleep(for: configuration.sweepInterval)
            } catch {
                return  // cancelled: the engine stops
            }
            let now = clock()
            while try store.sweep(now: now, limit: configuration.sweepBatch) >= configuration.sweepBatch {}
        }
    }

    /// Runs `owner` until its partition is released or another owner replaces it (or the run
    /// is cancelled). One owner of a partition runs at a time: a new one (the partition assigned
    /// again, a re-claim) waits until the one before stopped following, or both would write the
    /// partition's state; an owner replaced while it waited never starts (its claim would fence
    /// the one that replaced it).
    private func own(_ owner: StatePartitionOwner<Store>) async throws {
        let partition = owner.changelog.configuration.partition
        guard await changed.wait(for: { self.state.withLock { $0.running.insert(partition).inserted } }) else { return }
        defer {
            state.withLock { state in
                state.running.remove(partition)
                if state.slots[partition]?.owner === owner { state.slots[partition] = nil }
            }
            changed.notify()
        }
        guard state.withLock({ $0.slots[partition].map { $0.owner === owner && !$0.stopping } ?? false }) else { return }
        try await owner.run { owner in
            self.state.withLock { $0.slots[partition]?.restored = true }
            self.changed.notify()
            _ = await self.changed.wait {
                self.state.withLock { $0.slots[partition].map { $0.owner !== owner || $0.stopping } ?? true }
            }
        }
    }
}
