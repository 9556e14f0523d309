import Kafka

/// Where timer records go in the timer topic (issue 56 design §1.2): partition
/// `bucket × levels + level`, `bucket = murmur2(key) mod buckets` (Kafka's key hash,
/// ``Murmur2``). A subject's (user's) timers are all in its bucket's `levels` partitions, and
/// the interleaved numbering gives each member of an eager `range` assignment whole buckets.
public struct TimerLayout: Sendable, Equatable {
    public let ladder: TimerLadder
    /// `timers.buckets` (6).
    public let buckets: Int

    /// - Precondition: buckets ≥ 1, and levels × buckets fits a partition number.
    public init(ladder: TimerLadder = TimerLadder(), buckets: Int = 6) {
        precondition(buckets >= 1 && ladder.levels * buckets <= Int(Int32.max), "timer buckets must be ≥ 1")
        self.ladder = ladder
        self.buckets = buckets
    }

    /// The partitions the topic must have: levels × buckets (108 by default).
    public var partitionCount: Int32 { Int32(ladder.levels * buckets) }

    /// The key's bucket: `(murmur2(key) & 0x7fffffff) mod buckets`; a null key hashes as an empty one.
    public func bucket(key: [UInt8]?) -> Int { Murmur2.partition(key ?? [], count: buckets) }

    /// The partition of a record with `key` at `level`.
    public func partition(key: [UInt8]?, level: Int) -> Int32 {
        precondition((0..<ladder.levels).contains(level), "no timer level \(level)")
        return Int32(bucket(key: key) * ladder.levels + level)
    }

    /// The level a partition holds (nil: not a partition of this layout).
    public func level(ofPartition partition: Int32) -> Int? {
        guard partition >= 0, partition < partitionCount else { return nil }
        return Int(partition) % ladder.levels
    }

    /// Every partition a key's timers can be in, level 0 first (for listing and cancelling).
    public func partitions(key: [UInt8]?) -> [Int32] {
        let first = Int32(bucket(key: key) * ladder.levels)
        return (0..<Int32(ladder.levels)).map { first + $0 }
    }
}
