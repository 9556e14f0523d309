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
    }

    public let configuration: Configuration
    private let producer: KafkaProducer
    private let store: Store
    private let clock: @Sendable () -> Int64
    private let state = Mutex(State())
    private let changed = ChangeSignal()
    private let starts: AsyncStream<StatePartitionOwner<Store>>
    private let startsContinuation: AsyncStream<StatePartitionOwner<Store>>.Continuation

    /// - Parameters:
    ///   - producer: writes claims and facts (`acks=all`, not idempotent: facts merge).
    ///   - clock: milliseconds since 1970, the facts' times.
    public init(_ configuration: Configuration, producer: KafkaProducer, store: Store, clock: @escaping @Sendable () -> Int64) {
        self.configuration = configuration
        self.producer = producer
        self.store = store
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
                state.claims += 1
                var changelog = ChangelogPartition.Configuration(
                    bootstrapServers: configuration.bootstrapServers, topic: configuration.changelogTopic, partition: p,
                    partitionCount: partitionCount)
                changelog.properties = configuration.properties
                let owner = StatePartitionOwner(
                    changelog, owner: "\(configuration.member):\(p):\(state.claims):\(UInt32.random(in: .min ... .max))", producer: producer,
                    store: store, clock: clock)
                state.slots[p] = Slot(owner: owner)
                return owner
            }
        }
        for owner in started { startsContinuation.yield(owner) }
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

    public func push(
        _ attempt: NotificationAttempt, partition: Int32, send: @Sendable ([String], Int64) async -> [String: PushAnswer]
    ) async throws -> StatefulOutcome {
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
        return try await owner.push(attempt, send: send)
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

    /// Runs `owner` until its partition is released (or the run is cancelled).
    private func own(_ owner: StatePartitionOwner<Store>) async throws {
        let partition = owner.changelog.configuration.partition
        defer {
            state.withLock { state in
                if state.slots[partition]?.owner === owner { state.slots[partition] = nil }
            }
            changed.notify()
        }
        try await owner.run { owner in
            self.state.withLock { $0.slots[partition]?.restored = true }
            self.changed.notify()
            _ = await self.changed.wait {
                self.state.withLock { $0.slots[partition].map { $0.owner !== owner || $0.stopping } ?? true }
            }
        }
    }
}
