import Kafka

/// A worker's delivery state as one pure value: the ``PartitionTable``, the partitions being
/// revoked, and the partitions the consumer was told to pause. Each input returns what the
/// shell (``PipelineCoordinator``, then ``Pipeline``) must do: process or not, bring the
/// consumer's pauses up to date, wake a waiter. No I/O, no clock, no lock: tested on its own
/// (DeliveryStateMachineTests).
///
/// The waiters it wakes, at transitions only, so a busy worker wakes nobody:
/// - the reader, when the worker stops being full (``Wakes/room``);
/// - the commit loop, when enough events finished to commit before the interval
///   (``Wakes/commitDue``);
/// - drains (revoke, shutdown), when a partition's last event in flight ends or a partition is
///   given up (``Wakes/drained``).
struct DeliveryStateMachine: Sendable {
    struct Wakes: OptionSet, Sendable {
        let rawValue: UInt8
        static let room = Wakes(rawValue: 1)
        static let commitDue = Wakes(rawValue: 2)
        static let drained = Wakes(rawValue: 4)
    }

    /// What the reader does with a message.
    struct Admission: Equatable, Sendable {
        var receipt: PartitionTable.Receipt
        /// Pauses or resumes are due: bring the consumer up to date (``pausesToApply()``).
        var flowChanged = false
        /// Events in flight reached the worker's bound: wait for ``Wakes/room`` before reading on.
        var full = false
        var wakes: Wakes = []
    }

    /// What follows an event's end.
    struct Finish: Equatable, Sendable {
        var flowChanged = false
        var wakes: Wakes = []
    }

    private(set) var table: PartitionTable
    private var revoking: Set<TopicPartition> = []
    /// What the consumer has been told to pause. It differs from the table's paused set until the
    /// shell applies the change; partitions given up leave it (the consumer resumes them when it
    /// unassigns them, so a later pause of the same partition must be sent again).
    private(set) var consumerPaused: Set<TopicPartition> = []
    let commitEveryEvents: Int
    let withOffsetMap: Bool

    init(limits: PartitionTable.Limits, withOffsetMap: Bool, commitEveryEvents: Int) {
        self.table = PartitionTable(limits: limits)
        self.withOffsetMap = withOffsetMap
        self.commitEveryEvents = max(1, commitEveryEvents)
    }

    var isFull: Bool { table.isFull }
    /// Whether enough events finished since the last commit to commit now.
    var commitDue: Bool { table.doneSinceCommit >= commitEveryEvents }
    var partitions: [TopicPartition] { table.partitions }
    /// Whether this worker still tracks `partition` (assigned, or being revoked and draining).
    func holds(_ partition: TopicPartition) -> Bool { table.tracker(partition) != nil }

    /// The wakes of the change from `before` (flags read before an input) to now.
    private func wakes(since before: (full: Bool, due: Bool)) -> Wakes {
        var wakes: Wakes = []
        if before.full && !isFull { wakes.insert(.room) }
        if !before.due && commitDue { wakes.insert(.commitDue) }
        return wakes
    }

    private var flags: (full: Bool, due: Bool) { (isFull, commitDue) }

    // MARK: Assignment

    /// Partitions were assigned, with the group's committed offsets and offset maps.
    mutating func assigned(_ offsets: [TopicPartitionOffset]) {
        for o in offsets {
            revoking.remove(o.topicPartition)
            table.assign(o.topicPartition, committed: o.offset.isConcrete ? o.offset.rawValue : nil, metadata: o.metadata)
        }
    }

    /// A revoke began: the partitions take no new work; events already running go on.
    mutating func revokeBegan(_ partitions: [TopicPartition]) {
        revoking.formUnion(partitions)
    }

    /// The partitions are given up (revoked after their drain, lost, or at the end): forgotten.
    mutating func released(_ partitions: [TopicPartition]) -> Wakes {
        let before = flags
        table.remove(partitions)
        revoking.subtract(partitions)
        consumerPaused.subtract(partitions)
        return wakes(since: before).union(.drained)
    }

    // MARK: Events

    mutating func received(_ partition: TopicPartition, offset: Int64) -> Admission {
        guard !revoking.contains(partition) else { return Admission(receipt: .ignore) }
        let before = flags
        let receipt = table.receive(partition, offset: offset)
        let flowChanged = receipt == .process && !table.flowChange(after: partition).isEmpty
        // An offset already done counts towards the next commit.
        return Admission(receipt: receipt, flowChanged: flowChanged, full: isFull, wakes: wakes(since: before))
    }

    /// An event ended; `done`: acknowledged, durably dead-lettered or skipped (it may be
    /// committed past), otherwise abandoned (never committed past here).
    mutating func finished(_ partition: TopicPartition, offset: Int64, done: Bool) -> Finish {
        guard done else { return Finish() }
        let before = flags
        table.done(partition, offset: offset)
        var finish = Finish(flowChanged: !table.flowChange(after: partition).isEmpty, wakes: wakes(since: before))
        if table.inFlight(partition) == 0 { finish.wakes.insert(.drained) }
        return finish
    }

    // MARK: Pauses

    /// The calls that bring the consumer to the table's paused set, counted as made: pauses
    /// before the call (so a failed call cannot hide one), resumes after it succeeds
    /// (``resumed(_:)``). Partitions given up are not resumed: the consumer does that itself.
    mutating func pausesToApply() -> PartitionTable.FlowChange {
        let wanted = table.pausedPartitions
        let held = Set(table.partitions)
        let change = PartitionTable.FlowChange(
            pause: wanted.subtracting(consumerPaused).sorted(),
            resume: consumerPaused.subtracting(wanted).intersection(held).sorted())
        consumerPaused.formUnion(change.pause)
        return change
    }

    /// The consumer resumed these partitions.
    mutating func resumed(_ partitions: [TopicPartition]) {
        consumerPaused.subtract(partitions)
    }

    var pausedCount: Int { table.pausedPartitions.count }

    // MARK: Commits

    func pendingCommits(for partitions: [TopicPartition]? = nil) -> [TopicPartitionOffset] {
        table.pendingCommits(for: partitions, withOffsetMap: withOffsetMap)
    }

    /// The broker acknowledged these commits: the room failing commits had held is free again
    /// (``PartitionTable/isFull``).
    mutating func commitAcked(_ offsets: [TopicPartitionOffset]) -> Wakes {
        let before = flags
        table.committed(offsets)
        return wakes(since: before)
    }

    mutating func commitFailed() {
        table.commitFailed()
    }
}
