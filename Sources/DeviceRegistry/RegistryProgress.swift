/// Where a ``RegistryFollower`` stands in each partition, and whether it has caught up. Pure:
/// the follower feeds it what happened; the tests drive it with no broker.
///
/// Caught up means: on every partition, the consumer reported the partition's end *after* the
/// follower started (so at or past the end offsets it saw at start: they only grow), and every
/// message before that end has been applied. The second half is decided by counting: the
/// consumer counts the messages it queued (``Kafka/KafkaConsumer/messagesQueued``, read when the
/// end is reported, so it covers every message before it), the follower counts those it
/// applied. Counting, not offsets, because the last offsets of a partition may hold no record a
/// consumer sees (transaction markers, which a transactional producer such as Kafka Streams or
/// Kafka Connect with exactly-once writes after every transaction).
///
/// Once caught up it stays so: new records arriving later are lag, not a reason to be unready.
public struct RegistryProgress: Sendable, Equatable {
    public struct Partition: Sendable, Equatable {
        /// The next offset to read: after the last record applied, or the end when only gaps remain.
        public var next: Int64
        /// The highest end offset known: the high watermark at start, later ends reported, and
        /// past the last record read.
        public var end: Int64
        /// The consumer reported the end, and everything before it is applied.
        public var reachedEnd = false
        /// An end reported while messages before it were still to be applied: (end, messages
        /// queued when it was reported).
        var pendingEnd: (offset: Int64, queued: Int)?
        /// Where the follower started: an end reported before it means the topic holds less than
        /// the file says it read (the topic was deleted and created again).
        var startedAt: Int64 = 0

        public var lag: Int64 { max(0, end - next) }

        public static func == (a: Partition, b: Partition) -> Bool {
            a.next == b.next && a.end == b.end && a.reachedEnd == b.reachedEnd && a.pendingEnd?.offset == b.pendingEnd?.offset
                && a.pendingEnd?.queued == b.pendingEnd?.queued
        }
    }

    public private(set) var partitions: [Int32: Partition] = [:]
    /// Messages applied (or skipped as invalid) since the start.
    public private(set) var taken = 0
    /// Set once every partition reached its end; never cleared.
    public private(set) var caughtUp = false
    /// Partitions whose end was reported before the offset the follower started from.
    public private(set) var behindFile: Set<Int32> = []
    /// Partitions whose next offset moved past gaps without a record, not yet stored.
    private(set) var unstoredAdvances: [Int32: Int64] = [:]

    public init() {}

    /// A partition the follower reads, from `next` (nil: from the beginning), with the high
    /// watermark read at start (nil when the broker did not answer).
    public mutating func start(partition: Int32, next: Int64?, high: Int64?) {
        let from = next ?? 0
        partitions[partition] = Partition(next: from, end: max(from, high ?? 0), startedAt: from)
        caughtUp = false
    }

    /// The follower applied `count` messages; `lastOffsets` is the last offset applied per partition.
    public mutating func applied(count: Int, lastOffsets: [Int32: Int64]) {
        taken += count
        for (p, last) in lastOffsets {
            guard var state = partitions[p] else { continue }
            state.next = max(state.next, last + 1)
            state.end = max(state.end, state.next)
            partitions[p] = state
        }
        for (p, state) in partitions {
            if let pending = state.pendingEnd, taken >= pending.queued { reach(p, pending.offset) }
        }
        updateCaughtUp()
    }

    /// The consumer read partition `p` to `offset`, having queued `queued` messages by then.
    public mutating func endOfPartition(_ p: Int32, offset: Int64, queued: Int) {
        guard var state = partitions[p] else { return }
        if offset < state.startedAt { behindFile.insert(p) }
        state.end = max(state.end, offset)
        state.pendingEnd = nil
        partitions[p] = state
        if taken >= queued {
            reach(p, offset)
        } else {
            partitions[p]?.pendingEnd = (offset, queued)
        }
        updateCaughtUp()
    }

    /// Offsets that moved past gaps since the last call, to store with the next batch.
    public mutating func takeUnstoredAdvances() -> [Int32: Int64] {
        defer { unstoredAdvances = [:] }
        return unstoredAdvances
    }

    /// Records behind the ends known, over all partitions.
    public var lag: Int64 { partitions.values.reduce(0) { $0 + $1.lag } }

    /// Everything before `offset` is applied: whatever lies between the last record and it are gaps.
    private mutating func reach(_ p: Int32, _ offset: Int64) {
        guard var state = partitions[p] else { return }
        state.pendingEnd = nil
        state.reachedEnd = true
        if offset > state.next {
            state.next = offset
            unstoredAdvances[p] = offset
        }
        state.end = max(state.end, state.next)
        partitions[p] = state
    }

    private mutating func updateCaughtUp() {
        if !caughtUp, !partitions.isEmpty, partitions.values.allSatisfy(\.reachedEnd) { caughtUp = true }
    }
}
