import Kafka
import Synchronization

/// The pipeline's shared state: the ``PartitionTable`` behind a lock, plus the partitions
/// being revoked and the first fatal error. Every event task, the reader, the commit loop and
/// the rebalance handler meet here.
///
/// A `Mutex`, not an actor: every operation is short and never suspends, and an actor would cost
/// each event two hops to it and two back (measured in docs/benchmarks.md).
final class PipelineCoordinator: Sendable {
    private struct State {
        var table: PartitionTable
        var revoking: Set<TopicPartition> = []
        var fatalError: String?
    }

    private let state: Mutex<State>
    private let withOffsetMap: Bool
    let commitEveryEvents: Int

    /// Notified when the worker stops being full (``isFull``): the reader may read on.
    let roomFreed = ChangeSignal()
    /// Notified when ``commitDue`` becomes true.
    let commitBecameDue = ChangeSignal()
    /// Notified when a partition's last event in flight ends, or one is forgotten: drains
    /// (``inFlight(_:)`` reaching 0) wait for it.
    let drained = ChangeSignal()

    /// What the waiters above care about, read before and after a change under the lock.
    private struct Flags {
        var full: Bool
        var due: Bool
    }

    private func flags(_ s: State) -> Flags {
        Flags(full: s.table.isFull, due: s.table.doneSinceCommit >= commitEveryEvents)
    }

    /// Notifies the signals whose transition happened between `before` and `after` (outside the lock).
    private func signal(from before: Flags, to after: Flags, drained partitionDrained: Bool = false) {
        if before.full && !after.full { roomFreed.notify() }
        if !before.due && after.due { commitBecameDue.notify() }
        if partitionDrained { drained.notify() }
    }

    init(limits: PartitionTable.Limits, withOffsetMap: Bool, commitEveryEvents: Int) {
        self.state = Mutex(State(table: PartitionTable(limits: limits)))
        self.withOffsetMap = withOffsetMap
        self.commitEveryEvents = max(1, commitEveryEvents)
    }

    var fatalError: String? { state.withLock { $0.fatalError } }

    // MARK: Assignment

    func assign(_ offsets: [TopicPartitionOffset]) {
        state.withLock { s in
            for o in offsets {
                s.revoking.remove(o.topicPartition)
                s.table.assign(o.topicPartition, committed: o.offset.isConcrete ? o.offset.rawValue : nil, metadata: o.metadata)
            }
        }
    }

    /// The partitions stop taking work; events already running go on.
    func beginRevoke(_ partitions: [TopicPartition]) {
        state.withLock { $0.revoking.formUnion(partitions) }
    }

    func remove(_ partitions: [TopicPartition]) {
        let (before, after) = state.withLock { s in
            let before = flags(s)
            s.table.remove(partitions)
            s.revoking.subtract(partitions)
            return (before, flags(s))
        }
        // After the state lock, never inside it: Pipeline.apply takes this lock, then the state's.
        consumerPaused.withLock { $0.subtract(partitions) }
        signal(from: before, to: after, drained: true)
    }

    /// The partitions the consumer has been told to pause (Pipeline.apply brings it to the
    /// table's paused set under this lock). Partitions given up leave it: the consumer resumes
    /// them itself when it unassigns them, so a later pause of the same partition must be sent.
    let consumerPaused = Mutex<Set<TopicPartition>>([])

    var partitions: [TopicPartition] { state.withLock { $0.table.partitions } }

    /// Whether this worker still tracks `partition` (assigned, or being revoked and draining).
    func holds(_ partition: TopicPartition) -> Bool { state.withLock { $0.table.tracker(partition) != nil } }

    var committedOffsets: [TopicPartition: Int64] {
        state.withLock { s in
            var result: [TopicPartition: Int64] = [:]
            for p in s.table.partitions { result[p] = s.table.tracker(p)?.committedOffset }
            return result
        }
    }

    // MARK: Events

    /// What the reader learns from one call here per message.
    struct Admission {
        var receipt: PartitionTable.Receipt
        var flow = PartitionTable.FlowChange()
        /// Events in flight reached the worker's bound: wait before reading on.
        var full = false
        /// A fatal error was recorded: stop reading.
        var stopping = false
    }

    /// A message arrived: whether to process it, any flow-control change it causes, and
    /// whether the reader should wait or stop.
    func receive(_ message: KafkaMessage) -> Admission {
        let tp = message.topicPartition
        let (admission, before, after) = state.withLock { s -> (Admission, Flags?, Flags?) in
            guard s.fatalError == nil else { return (Admission(receipt: .ignore, stopping: true), nil, nil) }
            guard !s.revoking.contains(tp) else { return (Admission(receipt: .ignore), nil, nil) }
            let before = flags(s)
            let receipt = s.table.receive(tp, offset: message.offset)
            let admission = Admission(
                receipt: receipt, flow: receipt == .process ? s.table.flowChange() : PartitionTable.FlowChange(),
                full: s.table.isFull)
            return (admission, before, flags(s))
        }
        // An offset already done counts towards the next commit.
        if let before, let after { signal(from: before, to: after) }
        return admission
    }

    /// The worker is at its bound of events in flight, or of events not yet committed.
    var isFull: Bool { state.withLock { $0.table.isFull } }

    /// An event ended. Returns any flow-control change (partitions that may resume).
    func finished(_ message: KafkaMessage, done: Bool, fatal: String?) -> PartitionTable.FlowChange {
        let (flow, before, after, partitionDrained) = state.withLock { s -> (PartitionTable.FlowChange, Flags?, Flags?, Bool) in
            if let fatal, s.fatalError == nil { s.fatalError = fatal }
            guard done else { return (PartitionTable.FlowChange(), nil, nil, false) }
            let before = flags(s)
            s.table.done(message.topicPartition, offset: message.offset)
            return (s.table.flowChange(), before, flags(s), s.table.inFlight(message.topicPartition) == 0)
        }
        if let before, let after { signal(from: before, to: after, drained: partitionDrained) }
        return flow
    }

    var inFlight: Int { state.withLock { $0.table.inFlight } }

    func inFlight(_ partitions: [TopicPartition]) -> Int { state.withLock { $0.table.inFlight(partitions) } }

    var pausedCount: Int {
        state.withLock { s in s.table.partitions.filter { s.table.isPaused($0) }.count }
    }

    /// The partitions held and, of those, the ones the table has paused, read together.
    var pauseState: (held: Set<TopicPartition>, paused: Set<TopicPartition>) {
        state.withLock { s in (Set(s.table.partitions), s.table.pausedPartitions) }
    }

    // MARK: Commits

    /// Whether enough events finished since the last commit to commit now.
    var commitDue: Bool { state.withLock { flags($0).due } }

    func pendingCommits(for partitions: [TopicPartition]? = nil) -> [TopicPartitionOffset] {
        state.withLock { $0.table.pendingCommits(for: partitions, withOffsetMap: withOffsetMap) }
    }

    func committed(_ offsets: [TopicPartitionOffset]) -> [(TopicPartition, committed: Int64?, uncommitted: Int)] {
        let (result, before, after) = state.withLock { s in
            let before = flags(s)
            s.table.committed(offsets)
            let result = offsets.map { o in
                let t = s.table.tracker(o.topicPartition)
                return (o.topicPartition, committed: t?.committedOffset, uncommitted: t?.uncommitted ?? 0)
            }
            return (result, before, flags(s))
        }
        // An acknowledged commit frees the room failing commits had held (PartitionTable.isFull).
        signal(from: before, to: after)
        return result
    }

    func commitFailed() {
        state.withLock { $0.table.commitFailed() }
    }

    func fail(_ reason: String) {
        state.withLock { s in
            if s.fatalError == nil { s.fatalError = reason }
        }
    }
}
