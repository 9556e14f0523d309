/// The timer engine's records between their read and their release (issue 56 design §2.2,
/// §2.4): a ``DueGate`` of their wake times, the records themselves, what revokes gave up, and
/// the wake the release loop sleeps for. Pure: the engine keeps it behind a lock
/// (``TimerShelf``) and feeds it reads, releases, assignments and revokes.
///
/// A revoke gives up a partition's waiting records at once (they may wait hours; the next owner
/// reads them again from the committed offset). They stay *in flight* for the offset tracker
/// (never done, so never committed past), and ``abandoned(_:)`` counts them so the revoke's
/// drain waits only for records already released. A record read for a partition being given up
/// is counted the same way.
struct TimerWaits<Item: Sendable>: Sendable {
    /// What became of a record offered to ``admit(_:partition:offset:wake:)``.
    enum Admission: Equatable, Sendable {
        /// It waits. `wakeLoop`: it is due before the wake the loop sleeps for: signal it.
        case waiting(wakeLoop: Bool)
        /// Its partition is being given up: not kept, counted as abandoned.
        case abandoned
        /// Already admitted at or past this offset: counted as abandoned.
        case outOfOrder
        /// The partition holds a whole window (the engine's flow control failed): counted as abandoned.
        case full
    }

    private var gate: DueGate
    private var items: [Int32: [Int64: Item]] = [:]
    private var givenUp: Set<Int32> = []
    private var abandonedCounts: [Int32: Int] = [:]
    /// The wake the release loop sleeps for (nil: none, it waits for a signal).
    private(set) var armed: Int64?

    /// - Parameter window: records one partition may hold here (``DueGate/window``).
    init(window: Int) {
        gate = DueGate(window: window)
    }

    /// All records waiting.
    var count: Int { gate.count }

    /// Takes a record read from `partition`, in offset order, waiting until `wake`
    /// (``TimerLadder/wake(due:release:)``).
    mutating func admit(_ item: Item, partition: Int32, offset: Int64, wake: Int64) -> Admission {
        guard !givenUp.contains(partition) else {
            abandonedCounts[partition, default: 0] += 1
            return .abandoned
        }
        switch gate.admit(partition: partition, offset: offset, release: wake) {
        case .admitted:
            items[partition, default: [:]][offset] = item
            guard armed.map({ wake < $0 }) ?? true else { return .waiting(wakeLoop: false) }
            armed = wake
            return .waiting(wakeLoop: true)
        case .outOfOrder:
            abandonedCounts[partition, default: 0] += 1
            return .outOfOrder
        case .full:
            abandonedCounts[partition, default: 0] += 1
            return .full
        }
    }

    /// Removes and returns the records whose wake is at or before `now` (by partition, each in
    /// offset order), and the earliest wake left, which the release loop then sleeps for.
    mutating func ripe(at now: Int64) -> (items: [Item], nextWake: Int64?) {
        var ripe: [Item] = []
        for released in gate.ripe(at: now) {
            if let item = items[released.partition]?.removeValue(forKey: released.offset) { ripe.append(item) }
        }
        armed = gate.nextWake
        return (ripe, armed)
    }

    /// `partitions` were assigned (again): they start afresh, nothing abandoned.
    mutating func assigned(_ partitions: some Sequence<Int32>) {
        for partition in partitions {
            givenUp.remove(partition)
            abandonedCounts[partition] = nil
            gate.drop(partitions: [partition])
            items[partition] = nil
        }
    }

    /// `partitions` are being given up: their waiting records are dropped and counted as
    /// abandoned, and records read for them from now on too.
    mutating func abandon(_ partitions: some Sequence<Int32>) {
        for partition in partitions {
            givenUp.insert(partition)
            abandonedCounts[partition, default: 0] += gate.drop(partitions: [partition])
            items[partition] = nil
        }
    }

    /// A record of `partition` released but not finished (its fire was not done): abandoned as
    /// the waiting ones are, read again by the partition's next owner.
    mutating func gaveUp(partition: Int32) {
        abandonedCounts[partition, default: 0] += 1
    }

    /// The records of `partitions` that were abandoned since they were assigned: in flight for
    /// the offset tracker, never finished here.
    func abandoned(_ partitions: some Sequence<Int32>) -> Int {
        partitions.reduce(0) { $0 + (abandonedCounts[$1] ?? 0) }
    }
}
