import Kafka
import Logging
import Synchronization
import Threading

/// Keeps a ``RegistryStore`` current with the registry topic: every partition, like a global
/// table, because events are keyed by their own IDs and any worker may need any user.
///
/// It reads in assign mode (no consumer group: every worker reads everything), starting from
/// the offsets stored with the records, so a restart reads only what it has not applied. Each
/// batch of records is applied with its offsets in one transaction. A record that does not
/// parse is logged, counted in ``invalid`` and skipped; its offset still counts.
///
/// ```swift
/// let follower = RegistryFollower(bootstrapServers: servers, properties: [:], topic: "device-registry", store: store, logger: log)
/// try await withThrowingTaskGroup(of: Void.self) { group in
///     group.addTask { try await follower.run() }
///     _ = await follower.waitUntilCaughtUp()   // then report ready
///     …
/// }
/// ```
///
/// Partitions added to the topic while it runs are read after the next start.
public final class RegistryFollower: Sendable {
    /// Tuning; the defaults suit a worker.
    public struct Configuration: Sendable {
        /// The most records applied in one transaction. Default 5,000.
        public var maxBatch = 5_000
        /// Messages the consumer buffers ahead of the follower. Default 20,000.
        public var messageBufferCapacity = 20_000
        /// Invalid records logged one by one per batch; the rest of a batch's in one line. Default 10.
        public var invalidLogsPerBatch = 10
        /// How long to wait for each partition's high watermark at start (for the lag only;
        /// readiness does not depend on it). Default 10 s.
        public var watermarkTimeout: Duration = .seconds(10)
        /// Where the consumer's librdkafka errors and lines go (the worker's, which summarises a
        /// broker outage once for all its clients); nil: each a warning on the logger.
        public var kafkaLogs: (errors: @Sendable (KafkaError) -> Void, lines: @Sendable (KafkaLogEntry) -> Void)?

        public init() {}
    }

    /// What the follower has done, for `/readyz`, metrics and `pushbridge registry`.
    public struct Status: Sendable, Equatable {
        public var caughtUp: Bool
        /// Records behind the end offsets known (the high watermarks at start, then the ends the
        /// consumer reported).
        public var lag: Int64
        /// Records applied (valid ones) since the start.
        public var applied: Int
        /// Records skipped because they did not parse, since the start.
        public var invalid: Int
        /// Preference members left out of records because their value is not one the format
        /// allows, by member (`time_zone`, `muted`, `quiet_hours`, `devices[].muted`), since the start.
        public var droppedPreferences: [String: Int] = [:]
        /// Per partition: the next offset to read and the end known.
        public var partitions: [Int32: RegistryProgress.Partition]
    }

    public let topic: String
    public let store: RegistryStore
    let consumerConfiguration: KafkaConsumerConfiguration
    let configuration: Configuration
    let logger: Logger
    let shared: Shared

    /// Prepares a follower; ``run()`` does the work.
    ///
    /// - Parameters:
    ///   - properties: raw librdkafka properties (security, SASL, TLS), as the worker's consumer has.
    public init(
        bootstrapServers: [String], properties: [String: String], topic: String, store: RegistryStore, logger: Logger,
        configuration: Configuration = .init()
    ) {
        var c = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers)
        c.clientID = "pushbridge-registry"
        c.autoOffsetReset = .earliest
        c.messageBufferCapacity = configuration.messageBufferCapacity
        // librdkafka prefetches up to 64 MB per partition by default: at the registry's load
        // rate (tens of MB/s) 8 MB is plenty, and it keeps a worker's memory bounded.
        c.properties = ["queued.max.messages.kbytes": "8192"].merging(properties) { _, given in given }
        self.consumerConfiguration = c
        self.configuration = configuration
        self.topic = topic
        self.store = store
        self.logger = logger
        self.shared = Shared(logger: logger, topic: topic)
    }

    /// Reached the end offsets it saw at start on every partition, everything before them
    /// applied (``RegistryProgress`` says exactly what that means). Stays true once true.
    public var caughtUp: Bool { shared.state.withLock { $0.progress.caughtUp } }

    /// Records behind the end offsets it knows, over all partitions.
    public var lag: Int64 { shared.state.withLock { $0.progress.lag } }

    /// Valid records applied since the start.
    public var applied: Int { shared.state.withLock { $0.applied } }

    /// Records skipped because they did not parse, since the start.
    public var invalid: Int { shared.state.withLock { $0.invalid } }

    public var status: Status {
        shared.state.withLock { s in
            Status(
                caughtUp: s.progress.caughtUp, lag: s.progress.lag, applied: s.applied, invalid: s.invalid,
                droppedPreferences: s.droppedPreferences, partitions: s.progress.partitions)
        }
    }

    /// Waits until ``caughtUp``: true; false if the task is cancelled first.
    /// Also returns (false) when ``run()`` ended without catching up (it failed, or was cancelled).
    public func waitUntilCaughtUp() async -> Bool {
        _ = await shared.changed.wait { shared.state.withLock { $0.progress.caughtUp || $0.ended } }
        return caughtUp
    }

    /// Waits until `condition` holds for the status, checked after each batch and each end of
    /// a partition: true; false if the task is cancelled first.
    public func wait(until condition: (Status) -> Bool) async -> Bool {
        await shared.changed.wait { condition(status) }
    }

    /// The state the reading task and the consumer's poll thread (ends of partitions) share.
    final class Shared: Sendable {
        struct State {
            var progress = RegistryProgress()
            var applied = 0
            var invalid = 0
            var droppedPreferences: [String: Int] = [:]
            /// The running consumer, for the count of messages it queued (read at a partition's end).
            var consumer: KafkaConsumer?
            /// ``run()`` returned or threw.
            var ended = false
        }

        let state = Mutex(State())
        /// Notified after each batch and each end of a partition.
        let changed = ChangeSignal()
        let logger: Logger
        let topic: String
        let started = ContinuousClock.now

        init(logger: Logger, topic: String) {
            self.logger = logger
            self.topic = topic
        }

        /// Updates the progress; logs the moment the follower catches up.
        func update(_ body: (inout State) -> Void) {
            let (caughtUpNow, newlyBehind) = state.withLock { s -> (Bool, Set<Int32>) in
                let before = (s.progress.caughtUp, s.progress.behindFile)
                body(&s)
                return (!before.0 && s.progress.caughtUp, s.progress.behindFile.subtracting(before.1))
            }
            for p in newlyBehind.sorted() {
                logger.warning(
                    "registry: \(topic)[\(p)] ends before the offset stored in the registry file: was the topic created again? Delete the file to load it anew"
                )
            }
            if caughtUpNow {
                let seconds =
                    Double((ContinuousClock.now - started).components.seconds)
                    + Double((ContinuousClock.now - started).components.attoseconds) / 1e18
                logger.info(
                    "registry: caught up with \(topic)",
                    metadata: [
                        "applied": "\(state.withLock { $0.applied })", "seconds": "\((seconds * 10).rounded() / 10)",
                    ])
            }
            changed.notify()
        }

        /// Called on the consumer's poll thread, after the messages before the end were queued.
        func endOfPartition(_ end: TopicPartitionOffset) {
            update { s in
                guard let queued = s.consumer?.messagesQueued else { return }
                s.progress.endOfPartition(end.partition, offset: end.offset.rawValue, queued: queued)
            }
        }
    }
}
