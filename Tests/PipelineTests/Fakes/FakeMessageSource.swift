import Foundation
import Kafka
import Pipeline
import Synchronization

/// A consumer in a group, in memory: the pipeline's reliability scenarios without a broker.
///
/// It behaves as ``KafkaConsumer`` does, as documented there and in librdkafka:
/// - messages of the partitions assigned and not paused, in offset order per partition, from the
///   committed offset (or the start), round-robin across partitions;
/// - up to `channelCapacity` messages already handed to the consumer's channel still arrive
///   after a pause (KafkaConsumer's `MessageChannel`); librdkafka drops what it had fetched for
///   a paused partition (confluent-kafka-dotnet#1621, librdkafka#5343) and its pause is
///   synchronous (librdkafka#2473), so after ``resume(_:)`` reading goes on after the last
///   message handed over;
/// - rebalances (``assign(_:)``, ``revoke(_:)``, ``lose(_:)``) call the handler as librdkafka's
///   rebalance callback does (`KafkaRebalanceHandler`): nothing new is fetched while it runs;
///   onAssign before any message of the partitions; the channel's messages of revoked or lost
///   partitions are dropped first, onRevoke runs while they are still owned, then they go, and
///   a partition paused then is resumed (`RDKafkaConsumer+Rebalance`: librdkafka itself would
///   keep it paused across a re-assignment, librdkafka#1849);
/// - a cancelled reader gets what is in the channel, then nil (`MessageChannel.next`);
/// - ``close()`` revokes what is held (onRevoke runs), then ends the stream;
/// - commits are recorded with their metadata, or fail while ``failCommits(_:)`` says so, as a
///   coordinator that is away does (`REQUEST_TIMED_OUT`).
final class FakeMessageSource: MessageSource, Sendable {
    private struct State {
        var logs: [TopicPartition: [KafkaMessage]] = [:]
        var committed: [TopicPartition: TopicPartitionOffset] = [:]
        /// Assigned partitions and the next offset to hand over.
        var positions: [TopicPartition: Int64] = [:]
        var paused: Set<TopicPartition> = []
        var channel: [KafkaMessage] = []
        var rebalancing = false
        var closed = false
        var failingCommits = 0
        var failedCommits = 0
        var commits: [[TopicPartitionOffset]] = []
        var nextPartition = 0
        var reader: CheckedContinuation<Void, Never>?
        var channelCapacity = 8
        var delivered = 0
    }

    let handler: KafkaRebalanceHandler
    /// How long ``pause(_:)`` blocks before the pause takes effect: librdkafka's wait for its
    /// broker thread to take the change (pause is synchronous since librdkafka#2473). A test
    /// widens with it the moment in which a resume can come first.
    let pauseTime: TimeInterval
    private let state = Mutex(State())

    init(handler: KafkaRebalanceHandler, channelCapacity: Int = 8, pauseTime: TimeInterval = 0) {
        self.handler = handler
        self.pauseTime = pauseTime
        state.withLock { $0.channelCapacity = channelCapacity }
    }

    // MARK: The test's side

    /// Appends `values` to the partition's log.
    func append(_ partition: TopicPartition, _ values: [[UInt8]]) {
        wake {
            var log = $0.logs[partition, default: []]
            for value in values {
                log.append(KafkaMessage(topic: partition.topic, partition: partition.partition, offset: Int64(log.count), value: value))
            }
            $0.logs[partition] = log
        }
    }

    /// Assigns `partitions` as the group would: onAssign first, then their messages flow.
    func assign(_ partitions: [TopicPartition]) async {
        state.withLock { $0.rebalancing = true }
        await handler.onAssign(partitions)
        wake { s in
            for p in partitions { s.positions[p] = max(0, s.committed[p]?.offset.rawValue ?? 0) }
            s.rebalancing = false
        }
    }

    /// Revokes `partitions`: their messages in the channel are dropped, onRevoke runs while they
    /// are still held (commits succeed), then they are gone.
    func revoke(_ partitions: [TopicPartition]) async {
        drop(partitions)
        await handler.onRevoke(partitions)
        forget(partitions)
    }

    /// Loses `partitions` (a session timeout): dropped, onLost, gone.
    func lose(_ partitions: [TopicPartition]) async {
        drop(partitions)
        await handler.onLost(partitions)
        forget(partitions)
    }

    /// The next `count` commits fail.
    func failCommits(_ count: Int) { state.withLock { $0.failingCommits = count } }

    /// The group's committed offset per partition.
    var committedOffsets: [TopicPartition: Int64] { state.withLock { $0.committed.mapValues(\.offset.rawValue) } }

    /// Messages in the consumer's channel, not yet taken.
    var buffered: Int { state.withLock { $0.channel.count } }

    /// Messages the reader has taken from ``messages``.
    var delivered: Int { state.withLock { $0.delivered } }

    /// How many commits failed.
    var failedCommits: Int { state.withLock { $0.failedCommits } }

    /// Every commit that succeeded, in order.
    var commits: [[TopicPartitionOffset]] { state.withLock { $0.commits } }

    var paused: Set<TopicPartition> { state.withLock { $0.paused } }

    // MARK: MessageSource

    func subscribe(topics: [String]) throws(KafkaError) {}

    var messages: Messages { Messages(source: self) }

    var assignment: Set<TopicPartition> { state.withLock { Set($0.positions.keys) } }

    func pause(_ partitions: [TopicPartition]) throws(KafkaError) {
        if pauseTime > 0, !partitions.isEmpty { Thread.sleep(forTimeInterval: pauseTime) }
        state.withLock { s in
            for p in partitions where s.positions[p] != nil { s.paused.insert(p) }
        }
    }

    func resume(_ partitions: [TopicPartition]) throws(KafkaError) {
        wake { s in s.paused.subtract(partitions) }
    }

    func commit(_ offsets: [TopicPartitionOffset]) async throws(KafkaError) {
        let error = state.withLock { s -> KafkaError? in
            if s.failingCommits > 0 {
                s.failingCommits -= 1
                s.failedCommits += 1
                return KafkaError(code: .requestTimedOut, message: "the coordinator is away (fake)", isRetryable: true)
            }
            if let foreign = offsets.first(where: { s.positions[$0.topicPartition] == nil }) {
                return KafkaError(code: .unknownMemberID, message: "\(foreign.topicPartition) is not assigned to this member (fake)")
            }
            for o in offsets { s.committed[o.topicPartition] = o }
            s.commits.append(offsets)
            return nil
        }
        if let error { throw error }
    }

    func committedOffsets(_ partitions: [TopicPartition]) async throws(KafkaError) -> [TopicPartitionOffset] {
        state.withLock { s in partitions.map { s.committed[$0] ?? TopicPartitionOffset($0, offset: .invalid) } }
    }

    func partitionCount(of topic: String) async throws(KafkaError) -> Int {
        state.withLock { s in s.logs.keys.filter { $0.topic == topic }.count }
    }

    /// Leaves the group as KafkaConsumer.close() does: the partitions held are revoked first
    /// (onRevoke runs), then the stream ends.
    func close() async {
        let held = Array(assignment)
        if !held.isEmpty { await revoke(held) }
        wake { $0.closed = true }
    }

    // MARK: Delivery

    struct Messages: AsyncSequence, Sendable {
        typealias Element = KafkaMessage
        typealias Failure = KafkaError
        let source: FakeMessageSource

        struct AsyncIterator: AsyncIteratorProtocol {
            let source: FakeMessageSource
            mutating func next() async throws(KafkaError) -> KafkaMessage? { await source.next() }
            mutating func next(isolation actor: isolated (any Actor)?) async throws(KafkaError) -> KafkaMessage? { await source.next() }
        }

        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: source) }
    }

    private func next() async -> KafkaMessage? {
        while true {
            switch state.withLock({ Self.take(&$0) }) {
            case .message(let m): return m
            case .end: return nil
            case .wait: break
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (reader: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { s -> Bool in
                        if case .wait = Self.take(&s, peek: true), !Task.isCancelled {
                            s.reader = reader
                            return false
                        }
                        return true
                    }
                    if ready { reader.resume() }
                }
            } onCancel: {
                state.withLock { s in
                    defer { s.reader = nil }
                    return s.reader
                }?.resume()
            }
        }
    }

    private enum Take {
        case message(KafkaMessage)
        case end, wait
    }

    /// Fills the channel from the partitions that may be fetched, then takes its first message.
    private static func take(_ s: inout State, peek: Bool = false) -> Take {
        if !s.rebalancing && !s.closed { fill(&s) }
        if let first = s.channel.first {
            if !peek {
                s.channel.removeFirst()
                s.delivered += 1
            }
            return .message(first)
        }
        return s.closed || Task.isCancelled ? .end : .wait
    }

    private static func fill(_ s: inout State) {
        let fetchable = s.positions.keys.filter { !s.paused.contains($0) }.sorted()
        guard !fetchable.isEmpty else { return }
        var idle = 0
        while s.channel.count < s.channelCapacity, idle < fetchable.count {
            let p = fetchable[s.nextPartition % fetchable.count]
            s.nextPartition += 1
            let position = s.positions[p]!
            guard let log = s.logs[p], position < log.count else {
                idle += 1
                continue
            }
            idle = 0
            s.channel.append(log[Int(position)])
            s.positions[p] = position + 1
        }
    }

    private func drop(_ partitions: [TopicPartition]) {
        state.withLock { s in
            s.rebalancing = true
            s.channel.removeAll { partitions.contains($0.topicPartition) }
        }
    }

    private func forget(_ partitions: [TopicPartition]) {
        wake { s in
            for p in partitions {
                s.positions[p] = nil
                s.paused.remove(p)
            }
            s.rebalancing = false
        }
    }

    /// Changes the state and wakes the reader, if it waits.
    private func wake(_ change: (inout State) -> Void) {
        state.withLock { s in
            change(&s)
            defer { s.reader = nil }
            return s.reader
        }?.resume()
    }
}
