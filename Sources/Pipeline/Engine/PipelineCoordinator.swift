import Kafka
import Synchronization
import Threading

/// The worker's ``DeliveryStateMachine`` behind a lock, and the signals it wakes. Every runner,
/// the reader, the commit loop and the rebalance handler meet here; each call feeds the machine
/// one input under the lock and notifies the waiters it names outside it.
///
/// A `Mutex`, not an actor: every operation is short and never suspends, and an actor would cost
/// each event two hops to it and two back (measured in docs/benchmarks.md).
final class PipelineCoordinator: Sendable {
    private let state: Mutex<DeliveryStateMachine>
    /// Held while the consumer's pauses are brought up to date: one applier at a time.
    private let applying = Mutex(())

    /// Notified when the worker stops being full (``isFull``): the reader may read on.
    let roomFreed = ChangeSignal()
    /// Notified when ``commitDue`` becomes true.
    let commitBecameDue = ChangeSignal()
    /// Notified when a partition's last event in flight ends, or one is forgotten: drains
    /// (``inFlight(_:)`` reaching 0) wait for it.
    let drained = ChangeSignal()

    init(limits: PartitionTable.Limits, withOffsetMap: Bool, commitEveryEvents: Int) {
        self.state = Mutex(DeliveryStateMachine(limits: limits, withOffsetMap: withOffsetMap, commitEveryEvents: commitEveryEvents))
    }

    private func wake(_ wakes: DeliveryStateMachine.Wakes) {
        if wakes.contains(.room) { roomFreed.notify() }
        if wakes.contains(.commitDue) { commitBecameDue.notify() }
        if wakes.contains(.drained) { drained.notify() }
    }

    // MARK: Assignment

    func assign(_ offsets: [TopicPartitionOffset]) { state.withLock { $0.assigned(offsets) } }

    /// The partitions stop taking work; events already running go on.
    func beginRevoke(_ partitions: [TopicPartition]) { state.withLock { $0.revokeBegan(partitions) } }

    /// Forgets `partitions`. Returns only once no pause call is under way: one computed before
    /// the release could otherwise land after the consumer's unassign (which resumes what the
    /// application paused) and leave a re-assigned partition paused with nothing to resume it.
    func remove(_ partitions: [TopicPartition]) {
        wake(state.withLock { $0.released(partitions) })
        applying.withLock { _ in }
    }

    var partitions: [TopicPartition] { state.withLock { $0.partitions } }

    func holds(_ partition: TopicPartition) -> Bool { state.withLock { $0.holds(partition) } }

    var committedOffsets: [TopicPartition: Int64] {
        state.withLock { s in
            var result: [TopicPartition: Int64] = [:]
            for p in s.partitions { result[p] = s.table.tracker(p)?.committedOffset }
            return result
        }
    }

    // MARK: Events

    /// A message arrived: whether to process it, and whether the reader should wait for room.
    func receive(_ message: KafkaMessage, to source: some MessageSource, onPauseFailure: (KafkaError) -> Void) -> DeliveryStateMachine.Admission {
        let admission = state.withLock { $0.received(message.topicPartition, offset: message.offset) }
        wake(admission.wakes)
        if admission.flowChanged { applyPauses(to: source, onFailure: onPauseFailure) }
        return admission
    }

    /// An event ended (`done`: it may be committed past).
    @discardableResult
    func finished(
        _ message: KafkaMessage, done: Bool, source: some MessageSource, onPauseFailure: (KafkaError) -> Void
    )
        -> DeliveryStateMachine.Finish
    {
        let finish = state.withLock { $0.finished(message.topicPartition, offset: message.offset, done: done) }
        wake(finish.wakes)
        if finish.flowChanged { applyPauses(to: source, onFailure: onPauseFailure) }
        return finish
    }

    /// Brings the consumer's paused partitions to what the table says now.
    ///
    /// The reader and the runners learn of flow changes under the lock but call the consumer
    /// outside it. Applied as they came, a resume could overtake the pause it undoes and leave
    /// the partition paused for good while the table thinks it is read (the fake consumer of
    /// PipelineScenarioTests caught it under load). So a change is only a cue: one applier at a
    /// time brings the consumer to the table's current state, and the last change is followed by
    /// an apply that sees it.
    private func applyPauses(to source: some MessageSource, onFailure: (KafkaError) -> Void) {
        applying.withLock { _ in
            let change = state.withLock { $0.pausesToApply() }
            guard !change.isEmpty else { return }
            do throws(KafkaError) {
                try source.pause(change.pause)
                try source.resume(change.resume)
                state.withLock { $0.resumed(change.resume) }
            } catch {
                onFailure(error)
            }
        }
    }

    /// The worker is at its bound of events in flight, or of events not yet committed.
    var isFull: Bool { state.withLock { $0.isFull } }

    var inFlight: Int { state.withLock { $0.table.inFlight } }

    func inFlight(_ partitions: [TopicPartition]) -> Int { state.withLock { $0.table.inFlight(partitions) } }

    var pausedCount: Int { state.withLock { $0.pausedCount } }

    // MARK: Commits

    var commitDue: Bool { state.withLock { $0.commitDue } }

    func pendingCommits(for partitions: [TopicPartition]? = nil) -> [TopicPartitionOffset] {
        state.withLock { $0.pendingCommits(for: partitions) }
    }

    /// The broker acknowledged `offsets`: each partition's committed offset and what it has
    /// finished but not yet committed, for the metrics.
    func committed(_ offsets: [TopicPartitionOffset]) -> [(TopicPartition, committed: Int64?, uncommitted: Int)] {
        let (result, wakes) = state.withLock { s in
            let wakes = s.commitAcked(offsets)
            let result = offsets.map { o in
                let t = s.table.tracker(o.topicPartition)
                return (o.topicPartition, committed: t?.committedOffset, uncommitted: t?.uncommitted ?? 0)
            }
            return (result, wakes)
        }
        wake(wakes)
        return result
    }

    func commitFailed() { state.withLock { $0.commitFailed() } }
}
