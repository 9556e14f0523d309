import Dates
import JSON
import Kafka

/// A place in a partition, as a user names it: `--from-offset`, `--from-time`, `--to-latest`, …
public enum OffsetPosition: Sendable, Equatable, CustomStringConvertible {
    /// The first record still stored (the low watermark).
    case earliest
    /// The high watermark: the offset the next record will get.
    case latest
    /// The same offset in every partition.
    case offset(Int64)
    /// An offset per partition (`--from-offset 0:1200 --from-offset 1:980`).
    case partitionOffsets([Int32: Int64])
    /// The first record whose timestamp is at or after this time (milliseconds since the epoch).
    case time(milliseconds: Int64)

    public var description: String {
        switch self {
        case .earliest: return "earliest"
        case .latest: return "latest"
        case .offset(let o): return "offset \(o)"
        case .partitionOffsets(let map):
            return map.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")
        case .time(let ms): return RFC3339.format(milliseconds: ms)
        }
    }
}

/// One partition's part of a replay: offsets `start..<end`.
public struct ReplayRange: Sendable, Equatable, CustomStringConvertible {
    public var partition: TopicPartition
    public var start: Int64
    /// Exclusive.
    public var end: Int64
    /// Why the range differs from what was asked, e.g. records deleted by retention.
    public var notes: [String] = []

    public init(partition: TopicPartition, start: Int64, end: Int64, notes: [String] = []) {
        self.partition = partition
        self.start = start
        self.end = end
        self.notes = notes
    }

    public var count: Int64 { max(0, end - start) }
    public var isEmpty: Bool { end <= start }
    public var description: String { "\(partition) [\(start), \(end))" }
}

/// Which records a replay reads: one ``ReplayRange`` per partition.
public struct ReplayPlan: Sendable, Equatable {
    public var ranges: [ReplayRange]

    public init(ranges: [ReplayRange]) { self.ranges = ranges }

    /// Offsets in all ranges. An upper bound on the records read: compaction and transaction
    /// markers leave gaps.
    public var total: Int64 { ranges.reduce(0) { $0 + $1.count } }

    /// A plan is invalid for a reason the user must fix.
    public struct Invalid: Error, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// Resolves `from` and `to` into offsets, per partition.
    ///
    /// - An offset before the low watermark becomes the low watermark: retention deleted the
    ///   records before it (noted). An offset past the high watermark is kept (noted): reading
    ///   stops at the partition's end anyway.
    /// - `to` is exclusive; without one, the replay ends at the high watermark observed now.
    /// - A time resolves to the first record at or after it; when no record is that recent, to
    ///   the high watermark (an empty range for `from`, "up to now" for `to`).
    ///
    /// - Parameter partitions: a subset of the topic's partitions; all when nil, or those named
    ///   by a per-partition `from` when that is given.
    public static func resolve(
        topic: String, partitions: [Int32]?, from: OffsetPosition, to: OffsetPosition?, lookup: any OffsetLookup
    ) async throws -> ReplayPlan {
        let existing = try await lookup.partitions(of: topic)
        let chosen = try choosePartitions(partitions, for: from, flag: "--from-offset", existing: existing, topic: topic)
        if case .partitionOffsets(let map)? = to {
            let missing = chosen.filter { map[$0] == nil }
            if !missing.isEmpty {
                throw Invalid("--to-offset names no offset for partition \(missing.map(String.init).joined(separator: ", "))")
            }
        }
        try checkOrder(from: from, to: to)

        var ranges: [ReplayRange] = []
        for p in chosen {
            let tp = TopicPartition(topic: topic, partition: p)
            let (low, high) = try await lookup.watermarks(for: tp)
            var notes: [String] = []
            let start = try await position(from, in: tp, low: low, high: high, lookup: lookup, notes: &notes, role: "start")
            var end = high
            if let to {
                end = try await position(to, in: tp, low: low, high: high, lookup: lookup, notes: &notes, role: "end")
            }
            ranges.append(ReplayRange(partition: tp, start: start, end: max(start, end), notes: notes))
        }
        return ReplayPlan(ranges: ranges)
    }

    /// Resolves one position in one partition into an offset, at least `low`.
    public static func position(
        _ position: OffsetPosition, in tp: TopicPartition, low: Int64, high: Int64,
        lookup: any OffsetLookup, notes: inout [String], role: String = "position"
    ) async throws -> Int64 {
        let wanted: Int64
        switch position {
        case .earliest: return low
        case .latest: return high
        case .offset(let o): wanted = o
        case .partitionOffsets(let map):
            guard let o = map[tp.partition] else { throw Invalid("no offset given for partition \(tp.partition)") }
            wanted = o
        case .time(let ms):
            let answer = try await lookup.offsets(forTimes: [tp: ms]).first { $0.topicPartition == tp }
            guard let offset = answer?.offset, offset.isConcrete else {
                notes.append("\(role): no record at or after \(RFC3339.format(milliseconds: ms)); using the high watermark \(high)")
                return high
            }
            wanted = offset.rawValue
        }
        if wanted < low {
            notes.append("\(role): offsets before \(low) were deleted by retention; using \(low) instead of \(wanted)")
            return low
        }
        if wanted > high {
            // Kept: the replay stops at the partition's end anyway, and a broker may report the
            // high watermark wrongly (docs/replay.md).
            notes.append("\(role): \(wanted) is past the high watermark \(high) the broker reports; reading stops at the partition's end")
        }
        return wanted
    }

    /// The partitions asked for (all of `existing` when nil, or those a per-partition position
    /// names), each existing and each with an offset when `position` gives them per partition.
    static func choosePartitions(_ asked: [Int32]?, for position: OffsetPosition, flag: String, existing: [Int32], topic: String) throws -> [Int32] {
        var chosen = asked ?? existing
        if case .partitionOffsets(let map) = position {
            if asked == nil { chosen = map.keys.sorted() }
            let missing = chosen.filter { map[$0] == nil }
            if !missing.isEmpty {
                throw Invalid("\(flag) names no offset for partition \(missing.map(String.init).joined(separator: ", "))")
            }
        }
        let unknown = chosen.filter { !existing.contains($0) }
        if !unknown.isEmpty {
            throw Invalid(
                "topic \(topic) has partitions \(existing.map(String.init).joined(separator: ", ")); no partition \(unknown.map(String.init).joined(separator: ", "))"
            )
        }
        return Array(Set(chosen)).sorted()
    }

    private static func checkOrder(from: OffsetPosition, to: OffsetPosition?) throws {
        switch (from, to) {
        case (.offset(let a), .offset(let b)?) where b < a:
            throw Invalid("--to-offset \(b) is before --from-offset \(a)")
        case (.time(let a), .time(let b)?) where b < a:
            throw Invalid("--to-time \(RFC3339.format(milliseconds: b)) is before --from-time \(RFC3339.format(milliseconds: a))")
        default:
            break
        }
    }
}
