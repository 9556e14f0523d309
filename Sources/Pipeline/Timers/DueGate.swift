import DequeModule

/// Which received timer records may go (issue 56 design §2.2): per level partition, the records
/// read and not yet released, in offset order, each with its release time. A pure state
/// machine: the timer engine (step 3) holds it behind a lock, admits what the consumer reads,
/// sleeps until ``nextWake``, and forwards or fires what ``ripe(at:)`` gives.
///
/// A level partition is FIFO in release time up to the skew between the clocks of the workers
/// that wrote it, so the gate releases *any* ripe record, not only the head: one written by a
/// worker whose clock was behind does not wait behind its neighbour. The look-ahead is bounded:
/// a partition holds at most ``window`` records here (64 in a worker); when it is full, the
/// engine stops reading that partition (``isFull(_:)``), and librdkafka keeps the rest.
public struct DueGate: Sendable {
    /// A record waiting for its release.
    public struct Entry: Sendable, Equatable {
        public var offset: Int64
        /// UTC milliseconds.
        public var release: Int64

        public init(offset: Int64, release: Int64) {
            (self.offset, self.release) = (offset, release)
        }
    }

    /// A released record.
    public struct Released: Sendable, Equatable {
        public var partition: Int32
        public var offset: Int64

        public init(partition: Int32, offset: Int64) {
            (self.partition, self.offset) = (partition, offset)
        }
    }

    /// The most records one partition keeps waiting here (> 0).
    public let window: Int
    /// A partition's waiting records and the last offset it admitted (kept once they are released).
    private struct Lane: Sendable {
        var entries: Deque<Entry> = []
        var lastOffset: Int64
    }

    private var lanes: [Int32: Lane] = [:]

    public init(window: Int = 64) {
        precondition(window > 0, "a gate window holds at least one record")
        self.window = window
    }

    public enum Admission: Sendable, Equatable {
        case admitted
        /// The partition already holds ``DueGate/window`` records: hold the partition, offer it again later.
        case full
        /// Not after the partition's last admitted offset: a record read twice (the engine re-reads
        /// from the committed offset after a rebalance, and drops the partition first).
        case outOfOrder
    }

    /// Takes a record read from `partition`, in offset order.
    public mutating func admit(partition: Int32, offset: Int64, release: Int64) -> Admission {
        guard var lane = lanes[partition] else {
            lanes[partition] = Lane(entries: [Entry(offset: offset, release: release)], lastOffset: offset)
            return .admitted
        }
        guard offset > lane.lastOffset else { return .outOfOrder }
        guard lane.entries.count < window else { return .full }
        lanes[partition] = nil  // appended uniquely referenced
        lane.entries.append(Entry(offset: offset, release: release))
        lane.lastOffset = offset
        lanes[partition] = lane
        return .admitted
    }

    /// Whether `partition` holds a whole window.
    public func isFull(_ partition: Int32) -> Bool { (lanes[partition]?.entries.count ?? 0) >= window }

    /// The records of `partition` still waiting, in offset order.
    public func waiting(_ partition: Int32) -> [Entry] { Array(lanes[partition]?.entries ?? []) }

    /// All records waiting.
    public var count: Int { lanes.values.reduce(0) { $0 + $1.entries.count } }

    /// Removes and returns every record whose release is at or before `now`, by partition, each
    /// partition's in offset order.
    public mutating func ripe(at now: Int64) -> [Released] {
        var released: [Released] = []
        for partition in lanes.keys.sorted() {
            guard var lane = lanes[partition], lane.entries.contains(where: { $0.release <= now }) else { continue }
            lanes[partition] = nil
            for entry in lane.entries where entry.release <= now { released.append(Released(partition: partition, offset: entry.offset)) }
            lane.entries.removeAll { $0.release <= now }
            lanes[partition] = lane
        }
        return released
    }

    /// The earliest release of any waiting record: when to look again (nil: nothing waits).
    public var nextWake: Int64? {
        lanes.values.compactMap { lane in lane.entries.lazy.map(\.release).min() }.min()
    }

    /// Forgets the partitions' waiting records (revoked: the next owner reads them again).
    /// Returns how many were dropped.
    @discardableResult
    public mutating func drop(partitions: some Sequence<Int32>) -> Int {
        var dropped = 0
        for partition in partitions { dropped += lanes.removeValue(forKey: partition)?.entries.count ?? 0 }
        return dropped
    }
}
