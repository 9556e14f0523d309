import Kafka
import Synchronization
import Threading

/// A push waiting in the timer topic, as `pushbridge timers list` shows it.
public struct PendingTimer: Sendable, Equatable {
    /// The copy read furthest down the ladder (most hops).
    public var timer: TimerRecord
    /// Where that copy is: its level partition and offset.
    public var partition: Int32
    public var offset: Int64
    /// Copies read not yet committed past: 2 while a forward or a fire is under way.
    public var copies: Int
    /// The cancellation that covers it: it will not be sent.
    public var cancelled: TimerCancel?
}

/// One subject's pushes waiting in the timer topic, read from outside the timer group (design
/// §6.3): the subject's bucket (its `levels` partitions, ``TimerLayout/partitions(key:)``), each
/// from the group's committed offset (the start without one) to its end. What the group did after
/// its last commit (a commit interval, about a second) still shows.
public enum PendingTimers {
    /// - Parameters:
    ///   - consumer: brokers and properties, with `groupID` the timer group's
    ///     (`<kafka.group>.timers`): its committed offsets are read, never written.
    ///   - cancels: what the cancel topic holds (``TimerCancels/readAll(timeout:)``).
    public static func list(
        subject: [UInt8], topic: String, layout: TimerLayout, consumer configuration: KafkaConsumerConfiguration, cancels: TimerCancelSet,
        now: Int64, timeout: Duration = .seconds(30)
    ) async throws -> [PendingTimer] {
        let partitions = layout.partitions(key: subject).map { TopicPartition(topic: topic, partition: $0) }
        let reading = Reading(partitions: Set(partitions.map(\.partition)))
        let consumer = try KafkaConsumer(configuration: configuration, endOfPartitionHandler: { reading.ended($0.partition) })
        do {
            let committed = try await consumer.committed(partitions)
            try consumer.assign(committed.map { TopicPartitionOffset($0.topicPartition, offset: $0.offset.isConcrete ? $0.offset : .beginning) })
            try await read(consumer, into: reading, timeout: timeout)
        } catch {
            await consumer.close()
            throw error
        }
        await consumer.close()
        return pending(reading.messages.withLock { $0 }, subject: subject, cancels: cancels, now: now)
    }

    /// The timers of `subject` among `messages`, one per ID (the copy with the most hops), soonest first.
    static func pending(_ messages: [KafkaMessage], subject: [UInt8], cancels: TimerCancelSet, now: Int64) -> [PendingTimer] {
        var byID: [TimerID: PendingTimer] = [:]
        for message in messages where message.key == subject {
            guard let timer = try? TimerRecord(parsing: message) else { continue }
            var entry = PendingTimer(
                timer: timer, partition: message.partition, offset: message.offset, copies: 1,
                cancelled: cancels.cancellation(of: timer, now: now))
            if let known = byID[timer.id] {
                entry.copies = known.copies + 1
                if known.timer.hops > timer.hops { (entry.timer, entry.partition, entry.offset) = (known.timer, known.partition, known.offset) }
            }
            byID[timer.id] = entry
        }
        return byID.values.sorted { ($0.timer.due, $0.timer.id.hex) < ($1.timer.due, $1.timer.id.hex) }
    }

    /// Reads until every partition reported its end and every message before the ends was taken.
    private static func read(_ consumer: KafkaConsumer, into reading: Reading, timeout: Duration) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await message in consumer.messages { reading.add(message) }
            }
            let done = await reading.changed.wait(until: .now + timeout) { reading.done(queued: consumer.messagesQueued) }
            group.cancelAll()
            try await group.waitForAll()
            guard done else { throw KafkaError(code: .timedOut, message: "the timer topic was not read to its end in \(timeout)") }
        }
    }

    private final class Reading: Sendable {
        let messages = Mutex<[KafkaMessage]>([])
        let behind: Mutex<Set<Int32>>
        let changed = ChangeSignal()

        init(partitions: Set<Int32>) { behind = Mutex(partitions) }

        func add(_ message: KafkaMessage) {
            messages.withLock { $0.append(message) }
            changed.notify()
        }

        func ended(_ partition: Int32) {
            behind.withLock { _ = $0.remove(partition) }
            changed.notify()
        }

        /// Every end reported, and as many messages taken as the consumer queued before them.
        func done(queued: Int) -> Bool {
            behind.withLock { $0.isEmpty } && messages.withLock { $0.count } >= queued
        }
    }
}
