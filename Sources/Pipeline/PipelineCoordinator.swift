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
        state.withLock { s in
            s.table.remove(partitions)
            s.revoking.subtract(partitions)
        }
    }

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
        return state.withLock { s in
            guard s.fatalError == nil else { return Admission(receipt: .ignore, stopping: true) }
            guard !s.revoking.contains(tp) else { return Admission(receipt: .ignore) }
            let receipt = s.table.receive(tp, offset: message.offset)
            return Admission(
                receipt: receipt, flow: receipt == .process ? s.table.flowChange() : PartitionTable.FlowChange(),
                full: s.table.isFull)
        }
    }

    /// The worker is at its bound of events in flight, or of events not yet committed.
    var isFull: Bool { state.withLock { $0.table.isFull } }

    /// An event ended. Returns any flow-control change (partitions that may resume).
    func finished(_ message: KafkaMessage, done: Bool, fatal: String?) -> PartitionTable.FlowChange {
        state.withLock { s in
            if let fatal, s.fatalError == nil { s.fatalError = fatal }
            guard done else { return PartitionTable.FlowChange() }
            s.table.done(message.topicPartition, offset: message.offset)
            return s.table.flowChange()
        }
    }

    var inFlight: Int { state.withLock { $0.table.inFlight } }

    func inFlight(_ partitions: [TopicPartition]) -> Int { state.withLock { $0.table.inFlight(partitions) } }

    var pausedCount: Int {
        state.withLock { s in s.table.partitions.filter { s.table.isPaused($0) }.count }
    }

    // MARK: Commits

    /// Whether enough events finished since the last commit to commit now.
    var commitDue: Bool { state.withLock { $0.table.doneSinceCommit >= commitEveryEvents } }

    func pendingCommits(for partitions: [TopicPartition]? = nil) -> [TopicPartitionOffset] {
        state.withLock { $0.table.pendingCommits(for: partitions, withOffsetMap: withOffsetMap) }
    }

    func committed(_ offsets: [TopicPartitionOffset]) -> [(TopicPartition, committed: Int64?, uncommitted: Int)] {
        state.withLock { s in
            s.table.committed(offsets)
            return offsets.map { o in
                let t = s.table.tracker(o.topicPartition)
                return (o.topicPartition, t?.committedOffset, t?.uncommitted ?? 0)
            }
        }
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
