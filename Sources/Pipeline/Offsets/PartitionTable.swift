import Kafka

/// Every assigned partition's progress, flow control and commits, as one pure value.
///
/// The pipeline owns one (inside ``PipelineCoordinator``) and feeds it what happens: assignments,
/// received messages, finished events, acknowledged commits. It answers what may be committed
/// and which partitions to pause or resume. No I/O, no clock: tested on its own.
///
/// Flow control: a partition is paused while it has `partitionBuffer` or more events in flight,
/// and every partition is paused while the worker has `maxEventsInFlight` or more. A paused
/// partition resumes once it (and the worker) have drained to half of those bounds, so a busy
/// partition does not flap between paused and running. While commits fail, the worker is also
/// ``isFull`` (takes no new event) once events in flight plus events finished since the last
/// acknowledged commit reach `maxUncommittedEvents`: what a crash then makes the next owner
/// send again stays bounded.
public struct PartitionTable: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Events in flight across all partitions before all are paused.
        public var maxEventsInFlight: Int
        /// Events in flight in one partition before it is paused.
        public var partitionBuffer: Int
        /// Events in flight plus finished-but-uncommitted ones before the worker takes no more.
        public var maxUncommittedEvents: Int

        /// - Parameter maxUncommittedEvents: nil for `maxEventsInFlight` plus 1,000 (the pipeline
        ///   uses `maxEventsInFlight` plus its `commitEveryEvents`).
        public init(maxEventsInFlight: Int = 10_000, partitionBuffer: Int = 1_000, maxUncommittedEvents: Int? = nil) {
            self.maxEventsInFlight = max(1, maxEventsInFlight)
            self.partitionBuffer = max(1, partitionBuffer)
            self.maxUncommittedEvents = max(self.maxEventsInFlight, maxUncommittedEvents ?? self.maxEventsInFlight + 1_000)
        }
    }

    /// What to do with a received message.
    public enum Receipt: Equatable, Sendable {
        case process
        /// Done before a restart, per the committed offset map: counts as done now.
        case skipAlreadyDone
        /// Already passed (a re-delivery), or the partition is not (or no longer) ours: ignore.
        case ignore
    }

    /// Pause and resume these partitions.
    public struct FlowChange: Equatable, Sendable {
        public var pause: [TopicPartition] = []
        public var resume: [TopicPartition] = []
        public var isEmpty: Bool { pause.isEmpty && resume.isEmpty }

        public init(pause: [TopicPartition] = [], resume: [TopicPartition] = []) {
            self.pause = pause
            self.resume = resume
        }
    }

    public let limits: Limits
    private var trackers: [TopicPartition: OffsetTracker] = [:]
    private var paused: Set<TopicPartition> = []
    /// The worker-wide limits as ``flowChange(after:)`` last saw them (full, drained), and
    /// whether a partition came or went since: then every partition is looked at again.
    private var lastFlowFlags: (full: Bool, drained: Bool)?
    private var flowScanNeeded = true
    /// Events in flight over all partitions.
    public private(set) var inFlight = 0
    /// Events done since the last acknowledged commit, over all partitions.
    public private(set) var doneSinceCommit = 0
    /// The last commit failed, and none was acknowledged since.
    public private(set) var commitsFailing = false

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The partitions this table tracks.
    public var partitions: [TopicPartition] {
        trackers.keys.sorted()
    }

    public func tracker(_ partition: TopicPartition) -> OffsetTracker? { trackers[partition] }

    public func isPaused(_ partition: TopicPartition) -> Bool { paused.contains(partition) }

    /// The partitions paused now.
    public var pausedPartitions: Set<TopicPartition> { paused }

    // MARK: Assignment

    /// Starts tracking a partition from the group's committed offset and metadata (offset map).
    /// A partition that is already tracked keeps its state.
    public mutating func assign(_ partition: TopicPartition, committed: Int64?, metadata: String?) {
        guard trackers[partition] == nil else { return }
        trackers[partition] = OffsetTracker(committed: committed, metadata: metadata)
        flowScanNeeded = true
    }

    /// Stops tracking partitions (revoked or lost). Their unfinished events are forgotten: when
    /// they finish, ``done(_:offset:)`` ignores them.
    public mutating func remove(_ partitions: [TopicPartition]) {
        for p in partitions {
            guard let t = trackers.removeValue(forKey: p) else { continue }
            inFlight -= t.inFlight
            doneSinceCommit -= min(doneSinceCommit, t.doneSinceCommit)
            paused.remove(p)
            flowScanNeeded = true
        }
    }

    // MARK: Events

    /// A message arrived. Messages of a partition arrive in offset order.
    public mutating func receive(_ partition: TopicPartition, offset: Int64) -> Receipt {
        // Mutated in place: a copy would duplicate the tracker's window on every event.
        guard let receipt = trackers[partition]?.receive(offset) else { return .ignore }
        switch receipt {
        case .process:
            inFlight += 1
            return .process
        case .skipAlreadyDone:
            doneSinceCommit += 1
            return .skipAlreadyDone
        case .ignoreStale:
            return .ignore
        }
    }

    /// The event at `offset` is done (acknowledged, durably dead-lettered or skipped).
    /// Events of partitions no longer tracked, and repeats, are ignored.
    public mutating func done(_ partition: TopicPartition, offset: Int64) {
        guard let before = trackers[partition]?.inFlight else { return }
        trackers[partition]?.done(offset)
        if let after = trackers[partition]?.inFlight, after < before {
            inFlight -= 1
            doneSinceCommit += 1
        }
    }

    /// The worker takes no new event: events in flight reached `maxEventsInFlight`, or commits
    /// are failing and events in flight plus those finished since the last acknowledged commit
    /// reached `maxUncommittedEvents` (the next acknowledged commit frees the room).
    public var isFull: Bool {
        inFlight >= limits.maxEventsInFlight
            || (commitsFailing && inFlight + doneSinceCommit >= limits.maxUncommittedEvents)
    }

    /// Events in flight in `partition`.
    public func inFlight(_ partition: TopicPartition) -> Int { trackers[partition]?.inFlight ?? 0 }

    /// Events in flight in these partitions.
    public func inFlight(_ partitions: some Sequence<TopicPartition>) -> Int {
        partitions.reduce(0) { $0 + inFlight($1) }
    }

    // MARK: Flow control

    /// The pauses and resumes the limits call for now; applying them is the caller's job, and
    /// this table assumes it happened.
    ///
    /// - Parameter touched: the one partition whose events in flight changed since the last
    ///   call (an event received or done there). When the worker-wide limits still read as
    ///   then and no partition came or went, only it can need a pause or resume, so only it is
    ///   looked at: an event costs the same with 4 partitions or 400. Nil: every partition.
    public mutating func flowChange(after touched: TopicPartition? = nil) -> FlowChange {
        var change = FlowChange()
        let flags = (full: inFlight >= limits.maxEventsInFlight, drained: inFlight <= limits.maxEventsInFlight / 2)
        defer { lastFlowFlags = flags }
        if let touched, !flowScanNeeded, let last = lastFlowFlags, last == flags {
            if let n = trackers[touched]?.inFlight { flow(touched, inFlight: n, flags, &change) }
            return change
        }
        flowScanNeeded = false
        for (p, tracker) in trackers { flow(p, inFlight: tracker.inFlight, flags, &change) }
        change.pause.sort()
        change.resume.sort()
        return change
    }

    /// Pauses or resumes `p`, which has `n` events in flight, if the limits call for it.
    private mutating func flow(_ p: TopicPartition, inFlight n: Int, _ flags: (full: Bool, drained: Bool), _ change: inout FlowChange) {
        if paused.contains(p) {
            if flags.drained && n <= limits.partitionBuffer / 2 {
                paused.remove(p)
                change.resume.append(p)
            }
        } else if flags.full || n >= limits.partitionBuffer {
            paused.insert(p)
            change.pause.append(p)
        }
    }

    // MARK: Commits

    /// What to commit for `partitions` (all if nil): each partition whose watermark or offset
    /// map changed since its last acknowledged commit.
    public func pendingCommits(
        for partitions: [TopicPartition]? = nil, withOffsetMap: Bool, maxMetadataBytes: Int = OffsetMap.defaultMaxBytes
    ) -> [TopicPartitionOffset] {
        (partitions ?? self.partitions).compactMap { p in
            guard let pending = trackers[p]?.pendingCommit(withOffsetMap: withOffsetMap, maxMetadataBytes: maxMetadataBytes) else { return nil }
            return TopicPartitionOffset(p, offset: KafkaOffset(pending.offset), metadata: pending.metadata)
        }
    }

    /// A commit failed (the coordinator is moving or out of reach, the generation is stale, …).
    public mutating func commitFailed() {
        commitsFailing = true
    }

    /// The broker acknowledged these commits.
    public mutating func committed(_ offsets: [TopicPartitionOffset]) {
        commitsFailing = false
        for o in offsets {
            guard let before = trackers[o.topicPartition]?.doneSinceCommit else { continue }
            trackers[o.topicPartition]?.committed(o.offset.rawValue, metadata: o.metadata)
            let after = trackers[o.topicPartition]?.doneSinceCommit ?? 0
            doneSinceCommit -= min(doneSinceCommit, before - after)
        }
    }
}
