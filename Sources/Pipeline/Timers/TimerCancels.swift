import Dates
import Kafka
import Logging
import Synchronization
import Threading

/// The cancel topic (`timers.cancels`, docs/timers.md) as a timer engine follows it: every
/// partition read from its start, without a group, into a ``TimerCancelSet``; the engine asks it
/// at each release whether a timer was cancelled. Owns its consumer.
///
/// A cancellation counts on a worker once its consumer has read it (well under a second when
/// the topic is quiet): a timer released in between is still sent. At start the engine fires
/// nothing before this has read what the topic held (``waitUntilCaughtUp(until:)``), so a
/// restarted worker does not send what was cancelled while it was down.
public final class TimerCancels: Sendable {
    public let topic: String
    private let consumerConfiguration: KafkaConsumerConfiguration
    private let clock: any WallClock
    private let logger: Logger
    private let state = Mutex(State())
    private let changed = ChangeSignal()

    private struct State {
        var set = TimerCancelSet()
        /// Partitions not read to the end they had at start; nil before the start.
        var behind: Set<Int32>?
        var highs: [Int32: Int64] = [:]
        var unreadable = 0
        var lastExpiry: Int64 = 0
    }

    /// - Parameter consumer: brokers and properties; its group is not used (the partitions are assigned).
    public init(topic: String, consumer: KafkaConsumerConfiguration, clock: any WallClock = SystemWallClock(), logger: Logger) {
        var consumer = consumer
        consumer.groupID = nil
        consumer.groupInstanceID = nil
        (self.topic, consumerConfiguration, self.clock, self.logger) = (topic, consumer, clock, logger)
    }

    /// The cancellation that covers `timer` now, if one was read.
    public func cancellation(of timer: TimerRecord, now: Int64) -> TimerCancel? {
        state.withLock { $0.set.cancellation(of: timer, now: now) }
    }

    /// Whether everything the topic held at start has been read (or there was no topic).
    public var caughtUp: Bool { state.withLock { $0.behind?.isEmpty ?? false } }

    /// Cancellations held, and records that were none (skipped, logged).
    public var counts: (cancellations: Int, unreadable: Int) { state.withLock { ($0.set.count, $0.unreadable) } }

    /// Waits until ``caughtUp`` (true), or `deadline` passes or the task is cancelled (false).
    public func waitUntilCaughtUp(until deadline: ContinuousClock.Instant) async -> Bool {
        await changed.wait(until: deadline) { caughtUp }
    }

    /// Follows the topic until the task is cancelled. A topic that does not exist is logged
    /// (nothing can be cancelled) and counts as read.
    /// - Throws: ``KafkaError`` when the consumer cannot start or fails.
    public func follow() async throws {
        let consumer = try KafkaConsumer(
            configuration: consumerConfiguration,
            logHandler: { [logger] entry in
                if entry.level <= 4 { logger.warning("timer cancels: librdkafka \(entry.facility): \(entry.message)") }
            },
            endOfPartitionHandler: { [self] end in reached(end.partition, atEnd: true) })
        do {
            try await start(consumer)
            for try await message in consumer.messages {
                read(message)
            }
        } catch {
            await consumer.close()
            throw error
        }
        await consumer.close()
    }

    /// Reads the whole topic once (for `pushbridge timers list`): the cancellations in it.
    public func readAll(timeout: Duration = .seconds(30)) async throws -> TimerCancelSet {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.follow() }
            let read = await waitUntilCaughtUp(until: .now + timeout)
            group.cancelAll()
            try await group.waitForAll()
            guard read else { throw KafkaError(code: .timedOut, message: "the cancel topic \(topic) was not read to its end in \(timeout)") }
            return state.withLock { $0.set }
        }
    }

    private func start(_ consumer: KafkaConsumer) async throws {
        let partitions: [Int32]
        do {
            partitions = try await consumer.partitions(of: topic)
        } catch let error as KafkaError where error.code == .unknownTopicOrPartition {
            logger.notice(
                "no cancel topic \(topic): pending pushes cannot be cancelled until it is created and the workers restarted (docs/timers.md)")
            update { $0.behind = [] }
            return
        }
        var highs: [Int32: Int64] = [:]
        for p in partitions {
            let (low, high) = try await consumer.watermarks(for: TopicPartition(topic: topic, partition: p))
            if high > low { highs[p] = high }
        }
        update { s in
            s.highs = highs
            s.behind = Set(highs.keys)
        }
        try consumer.assign(partitions.map { TopicPartitionOffset(TopicPartition(topic: topic, partition: $0), offset: .beginning) })
    }

    private func read(_ message: KafkaMessage) {
        let now = clock.nowMilliseconds()
        do {
            let cancel = try TimerCancel(key: message.key, value: message.value)
            update { s in
                s.set.add(cancel)
                if now - s.lastExpiry > 3_600_000 {
                    s.set.expire(now: now)
                    s.lastExpiry = now
                }
            }
        } catch {
            let count = update { s in
                s.unreadable += 1
                return s.unreadable
            }
            if count <= 10 {
                logger.warning(
                    "timer cancels: a record that is no cancellation is skipped",
                    metadata: ["record": "\(message.topicPartition)/\(message.offset)", "error": "\(error)"])
            }
        }
        reached(message.partition, next: message.offset + 1)
    }

    /// The consumer is at `next` in `partition`, or at its end: read once past the end it had
    /// at start, or at the end the consumer reports (the end a broker gives as the high
    /// watermark may be wrong: tansu's is).
    private func reached(_ partition: Int32, next: Int64 = 0, atEnd: Bool = false) {
        let done = update { s -> Bool in
            guard s.behind?.contains(partition) == true, atEnd || next >= s.highs[partition] ?? 0 else { return false }
            s.behind?.remove(partition)
            return true
        }
        if done, caughtUp { logger.info("timer cancels read", metadata: ["topic": "\(topic)", "cancellations": "\(counts.cancellations)"]) }
    }

    @discardableResult
    private func update<R>(_ body: (inout State) -> R) -> R {
        let result = state.withLock { body(&$0) }
        changed.notify()
        return result
    }
}
