import Kafka

/// The pipeline's shared state: the ``PartitionTable`` behind an actor, plus the partitions
/// being revoked and the first fatal error. Every event task, the reader, the commit loop and
/// the rebalance handler meet here.
actor PipelineCoordinator {
    private var table: PartitionTable
    private var revoking: Set<TopicPartition> = []
    private(set) var fatalError: String?
    private let withOffsetMap: Bool
    let commitEveryEvents: Int

    init(limits: PartitionTable.Limits, withOffsetMap: Bool, commitEveryEvents: Int) {
        self.table = PartitionTable(limits: limits)
        self.withOffsetMap = withOffsetMap
        self.commitEveryEvents = max(1, commitEveryEvents)
    }

    // MARK: Assignment

    func assign(_ offsets: [TopicPartitionOffset]) {
        for o in offsets {
            revoking.remove(o.topicPartition)
            table.assign(o.topicPartition, committed: o.offset.isConcrete ? o.offset.rawValue : nil, metadata: o.metadata)
        }
    }

    /// The partitions stop taking work; events already running go on.
    func beginRevoke(_ partitions: [TopicPartition]) {
        revoking.formUnion(partitions)
    }

    func remove(_ partitions: [TopicPartition]) {
        table.remove(partitions)
        revoking.subtract(partitions)
    }

    var partitions: [TopicPartition] { table.partitions }

    var committedOffsets: [TopicPartition: Int64] {
        var result: [TopicPartition: Int64] = [:]
        for p in table.partitions { result[p] = table.tracker(p)?.committedOffset }
        return result
    }

    // MARK: Events

    /// What the reader learns from one hop here per message.
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
        guard fatalError == nil else { return Admission(receipt: .ignore, stopping: true) }
        guard !revoking.contains(tp) else { return Admission(receipt: .ignore) }
        let receipt = table.receive(tp, offset: message.offset)
        return Admission(receipt: receipt, flow: receipt == .process ? table.flowChange() : PartitionTable.FlowChange(), full: isFull)
    }

    /// The worker is at its bound of events in flight, or of events not yet committed.
    var isFull: Bool { table.isFull }

    /// An event ended. Returns any flow-control change (partitions that may resume).
    func finished(_ message: KafkaMessage, done: Bool, fatal: String?) -> PartitionTable.FlowChange {
        if let fatal, fatalError == nil { fatalError = fatal }
        guard done else { return PartitionTable.FlowChange() }
        table.done(message.topicPartition, offset: message.offset)
        return table.flowChange()
    }

    var inFlight: Int { table.inFlight }

    func inFlight(_ partitions: [TopicPartition]) -> Int { table.inFlight(partitions) }

    var pausedCount: Int { table.partitions.filter { table.isPaused($0) }.count }

    // MARK: Commits

    /// Whether enough events finished since the last commit to commit now.
    var commitDue: Bool { table.doneSinceCommit >= commitEveryEvents }

    func pendingCommits(for partitions: [TopicPartition]? = nil) -> [TopicPartitionOffset] {
        table.pendingCommits(for: partitions, withOffsetMap: withOffsetMap)
    }

    func committed(_ offsets: [TopicPartitionOffset]) -> [(TopicPartition, committed: Int64?, uncommitted: Int)] {
        table.committed(offsets)
        return offsets.map { o in
            let t = table.tracker(o.topicPartition)
            return (o.topicPartition, t?.committedOffset, t?.uncommitted ?? 0)
        }
    }

    func commitFailed() {
        table.commitFailed()
    }

    func fail(_ reason: String) {
        if fatalError == nil { fatalError = reason }
    }
}
