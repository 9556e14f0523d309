import DequeModule

/// Tracks one partition's events from receipt to done, and says what may be committed.
///
/// Events finish out of order (sends complete whenever FCM answers), but Kafka commits a single
/// offset per partition that means "everything before this is done". The tracker therefore
/// commits the highest *contiguous* done offset + 1, and never an offset past an unfinished event.
///
/// Optionally it also encodes which later offsets are already done (the *offset map*) into the
/// commit metadata, so that after a restart those events are skipped instead of sent again.
///
/// A pure value: no I/O, no clock. The pipeline owns one per assigned partition.
public struct OffsetTracker: Sendable {
    /// What to do with a received message.
    public enum Receipt: Equatable, Sendable {
        /// Process it; call ``done(_:)`` when it is finished.
        case process
        /// It was already done before a restart (offset map); it counts as done now.
        case skipAlreadyDone
        /// Its offset is below what this tracker has already passed (a re-delivery after a
        /// seek); ignore it.
        case ignoreStale
    }

    private struct Entry {
        let offset: Int64
        var done: Bool
    }

    /// Received offsets not yet committable, in order; the first one is not done.
    private var window = Deque<Entry>()
    /// Everything below this offset is done (the next offset to commit).
    public private(set) var watermark: Int64?
    /// The last offset that was committed (acknowledged by the broker).
    public private(set) var committedOffset: Int64?
    /// The metadata of the last commit.
    public private(set) var committedMetadata: String?
    /// Offsets found done in the restored offset map, not yet re-received.
    private var restoredDone: Set<Int64>
    /// Events done since the last commit (for "commit every N events").
    public private(set) var doneSinceCommit = 0
    /// Events received and not yet done.
    public private(set) var inFlight = 0

    /// - Parameters:
    ///   - committed: the group's committed offset for the partition (nil if none).
    ///   - metadata: the committed metadata; an offset map written by this tracker is honoured
    ///     only if it was written for exactly `committed`.
    public init(committed: Int64?, metadata: String? = nil) {
        self.watermark = committed
        self.committedOffset = committed
        self.committedMetadata = metadata
        self.restoredDone = committed.flatMap { OffsetMap.decode(metadata, base: $0) } ?? []
    }

    /// Events received but not yet committable (in flight, or done after an unfinished one).
    public var uncommitted: Int { window.count }

    /// A message at `offset` was received. Offsets must arrive in increasing order.
    public mutating func receive(_ offset: Int64) -> Receipt {
        if let last = window.last?.offset, offset <= last { return .ignoreStale }
        if window.isEmpty {
            if let watermark, offset < watermark { return .ignoreStale }
            // Offsets are fetched in order, so nothing exists between the watermark and this
            // one (compaction, transaction markers): everything below it is done.
            watermark = offset
        }
        if restoredDone.remove(offset) != nil {
            window.append(Entry(offset: offset, done: true))
            doneSinceCommit += 1
            advance()
            return .skipAlreadyDone
        }
        window.append(Entry(offset: offset, done: false))
        inFlight += 1
        return .process
    }

    /// The event at `offset` is done: acknowledged, durably dead-lettered, or skipped.
    /// Unknown or repeated offsets are ignored.
    public mutating func done(_ offset: Int64) {
        guard let index = index(of: offset), !window[index].done else { return }
        window[index].done = true
        inFlight -= 1
        doneSinceCommit += 1
        if index == 0 { advance() }
    }

    private mutating func advance() {
        while let first = window.first, first.done {
            watermark = first.offset + 1
            window.removeFirst()
        }
        if let first = window.first { watermark = first.offset }
    }

    private func index(of offset: Int64) -> Int? {
        var low = 0
        var high = window.count - 1
        while low <= high {
            let mid = (low + high) / 2
            let o = window[mid].offset
            if o == offset { return mid }
            if o < offset { low = mid + 1 } else { high = mid - 1 }
        }
        return nil
    }

    /// What to commit now, if anything changed since the last commit: the watermark, and the
    /// offset map (when `withOffsetMap` and something beyond the watermark is done).
    public func pendingCommit(withOffsetMap: Bool, maxMetadataBytes: Int = OffsetMap.defaultMaxBytes) -> (offset: Int64, metadata: String?)? {
        guard let watermark else { return nil }
        let metadata = withOffsetMap ? offsetMap(maxBytes: maxMetadataBytes) : nil
        if watermark == committedOffset && metadata == committedMetadata { return nil }
        if let committedOffset, watermark < committedOffset { return nil }
        return (watermark, metadata)
    }

    /// Records that a commit of `offset` with `metadata` was acknowledged by the broker.
    public mutating func committed(_ offset: Int64, metadata: String?) {
        if let committedOffset, offset < committedOffset { return }
        committedOffset = offset
        committedMetadata = metadata
        doneSinceCommit = 0
    }

    private func offsetMap(maxBytes: Int) -> String? {
        guard let watermark, window.count > 1 else { return nil }
        let done = window.lazy.filter(\.done).map(\.offset)
        return OffsetMap.encode(done: Array(done), base: watermark, maxBytes: maxBytes)
    }
}
