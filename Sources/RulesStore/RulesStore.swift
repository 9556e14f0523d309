import Foundation
import Rules
import Synchronization

/// The rules store (docs/rules-state.md, "The rules store"): one SQLite file per worker holding
/// the state partitions it owns, each the merge of its changelog's facts up to a stored offset.
///
/// - **Writes** only through ``apply(partition:facts:)``, the changelog's tail, in offset order:
///   each batch in one transaction with the partition's next offset, so the file is always a
///   prefix of each partition's changelog; after a crash, read again from
///   ``nextOffset(partition:)``. Facts merge as a lattice (``NotificationState``), so facts
///   applied twice or in another order give the same state.
/// - **Reads** (``RulesState``) answer as ``InMemoryRulesState`` over the same facts, plus the
///   overlay: facts this owner wrote and has not read back yet
///   (``addPending(_:partition:offset:subjects:)``).
/// - **Claims**: the latest claim applied per partition (``claim(partition:)``). A re-claim
///   (the owner was fenced by a late claim and claims again) must restore the partition from
///   the changelog's start: the tail left out foreign reservations after the owner's first
///   claim, and those made between the two claims count (the ownership model found it). So the
///   owner calls ``reset(partition:)``, then restores from the earliest offset up to its new claim.
/// - **Expiry**: ``sweep(now:limit:)`` deletes rows whose facts stopped mattering, in bounded batches.
///
/// `Sendable`: the connection and the overlay are behind one `Mutex`; reads and writes take
/// turns (a batch of 500 facts holds it 15–45 ms, docs/benchmarks.md#rules-store). The WAL's
/// checkpoints run on a second connection behind a lock of their own, by the writer after its
/// commit, so reads never wait for one (``RulesCheckpointer``).
public final class RulesStore: RulesState, Sendable {
    public typealias Failure = RulesStoreError

    /// The SQLite file.
    public let path: String
    /// Opened with `readOnly`: every write throws ``RulesStoreError/Code/readOnly``.
    public let isReadOnly: Bool
    private let locked: Mutex<Inner>
    /// nil when read-only.
    private let checkpoints: Mutex<RulesCheckpointer>?

    private struct Inner: Sendable {
        let connection: RulesConnection
        var overlay = RulesOverlay()
        /// Each partition's next offset as stored, once read (nil inside: nothing applied).
        var nextOffsets: [Int32: Int64?] = [:]

        mutating func nextOffset(_ partition: Int32) throws(RulesStoreError) -> Int64? {
            if let known = nextOffsets[partition] { return known }
            let stored = try connection.nextOffset(partition)
            nextOffsets[partition] = .some(stored)
            return stored
        }
    }

    /// Opens the store at `path`, creating it (and its tables) unless `readOnly`.
    ///
    /// - Parameters:
    ///   - cacheMegabytes: SQLite's page cache (default 16 MB); pages beyond it are read through
    ///     the kernel's page cache.
    ///   - walMegabytes: how much the writes append to the WAL before it is copied into the file
    ///     (default 64 MB); also what the WAL file is cut back to.
    ///   - readOnly: open an existing file without writing to it (`render --rules-store` beside
    ///     a running worker); fails when there is no file at `path`.
    /// - Throws: ``RulesStoreError`` `.unusableFile` for a file that is not a rules store (or is
    ///   damaged, or of another format version), `.io` when it cannot be opened or created.
    public init(path: String, cacheMegabytes: Int = 16, walMegabytes: Int = 64, readOnly: Bool = false) throws(RulesStoreError) {
        if readOnly, !FileManager.default.fileExists(atPath: path) {
            throw RulesStoreError(code: .io, message: "\(path): no rules store there")
        }
        self.path = path
        isReadOnly = readOnly
        let walPages = max(walMegabytes, 1) * (1 << 20) / RulesSchema.pageSize
        let connection = try RulesConnection(path: path, cacheKiB: max(cacheMegabytes, 1) * 1024, readOnly: readOnly, walPages: walPages)
        locked = Mutex(Inner(connection: connection))
        checkpoints = readOnly ? nil : Mutex(try RulesCheckpointer(path: path, walPages: walPages))
    }

    // MARK: Writes

    /// Applies `facts`, read from changelog partition `partition` at their offsets (never
    /// decreasing: the facts of one record share its offset, and come in one call), and stores
    /// the next offset to read, in one transaction. Facts below the stored next offset were
    /// applied already and are skipped. Each applied fact leaves the overlay.
    /// - Throws: ``RulesStoreError``: `.outOfOrder` for offsets that decrease,
    ///   `.damagedRow` for a stored state that does not decode, `.readOnly`, `.io`. Nothing of
    ///   the batch is stored then.
    public func apply(partition: Int32, facts: [(offset: Int64, fact: Fact)]) throws(RulesStoreError) {
        let written = try locked.withLock { inner throws(RulesStoreError) -> Int in
            let before = try inner.nextOffset(partition)
            let applied = try inner.connection.apply(partition: partition, facts: facts)
            if let last = facts.last { inner.nextOffsets[partition] = .some(max(before ?? .min, last.offset + 1)) }
            if inner.overlay.count > 0 {
                for case .notification(let f) in applied { inner.overlay.applied(f, partition: partition) }
            }
            return inner.connection.pagesWritten
        }
        checkpoint(written)
    }

    /// Checkpoints the WAL, outside the connection's lock, once the writer (which has written
    /// `written` pages) has appended enough since the last checkpoint. Not while another caller
    /// checkpoints. A checkpoint that fails (an I/O error, which the next write meets too) is
    /// tried again after the next write: the batch before it is committed either way.
    private func checkpoint(_ written: Int) {
        _ = checkpoints?.withLockIfAvailable { checkpointer in try? checkpointer.checkpoint(writerPages: written) }
    }

    /// Records a fact this owner wrote to `partition`'s changelog in the record at `offset`
    /// (Kafka acknowledged it) that the tail has not applied yet: the reads include it until
    /// ``apply(partition:facts:)`` applies the same fact. A fact whose record the tail applied
    /// already (it read the record before the acknowledgement came back) is not kept.
    ///
    /// `subjects`: every subject the notification's merged state may have while the fact is
    /// pending (its attempt's, and the one ``state(of:)`` gave before it); a cap query finds the
    /// pending notification by them. The store reads nothing from the file here.
    public func addPending(_ fact: NotificationFact, partition: Int32, offset: Int64, subjects: [CapSubject]) throws(RulesStoreError) {
        guard !isReadOnly else { throw RulesStoreError(code: .readOnly, message: "\(path) is open read-only: cannot add a pending fact") }
        try locked.withLock { inner throws(RulesStoreError) in
            if let next = try inner.nextOffset(partition), offset < next { return }
            inner.overlay.add(fact, partition: partition, seen: subjects)
        }
    }

    /// How many facts are pending in the overlay.
    public var pendingCount: Int { locked.withLock { $0.overlay.count } }

    /// Forgets `partition`: its rows, claim, next offset and pending facts, so the next restore
    /// reads its changelog from the start (a re-claim; see the type's documentation).
    public func reset(partition: Int32) throws(RulesStoreError) {
        let written = try locked.withLock { inner throws(RulesStoreError) -> Int in
            try inner.connection.reset(partition: partition)
            inner.overlay.drop(partition: partition)
            inner.nextOffsets[partition] = nil
            return inner.connection.pagesWritten
        }
        checkpoint(written)
    }

    /// Deletes up to `limit` notifications whose expiry (the latest of their facts' `expires`,
    /// rounded up to the minute) is at or before `now` (ms since 1970), and up to `limit` rows
    /// that lead `[device]` reads to a user's notifications and outlived them, in one
    /// transaction. Call it again while it returns a full batch.
    /// - Returns: the rows deleted.
    public func sweep(now: Int64, limit: Int) throws(RulesStoreError) -> Int {
        let (deleted, written) = try locked.withLock { inner throws(RulesStoreError) in
            (try inner.connection.sweep(now: now, limit: limit), inner.connection.pagesWritten)
        }
        checkpoint(written)
        return deleted
    }

    // MARK: Progress

    /// The next changelog offset to read for `partition`; nil when nothing was applied (restore
    /// from the earliest offset).
    public func nextOffset(partition: Int32) throws(RulesStoreError) -> Int64? {
        try locked.withLock { inner throws(RulesStoreError) in try inner.connection.nextOffset(partition) }
    }

    /// The latest claim applied to `partition`, with its offset.
    public func claim(partition: Int32) throws(RulesStoreError) -> StoredClaim? {
        try locked.withLock { inner throws(RulesStoreError) in try inner.connection.claim(partition) }
    }

    // MARK: RulesState

    public func state(of notification: NotificationID) throws(RulesStoreError) -> NotificationState? {
        try locked.withLock { inner throws(RulesStoreError) in
            let stored = try inner.connection.state(of: notification)
            guard let pending = inner.overlay.state(of: notification) else { return stored }
            return stored.map { $0.merged(with: pending) } ?? pending
        }
    }

    public func notifications(
        of key: CapKey, countingAfter since: Int64, policy: RulesPolicy
    ) throws(RulesStoreError) -> [(
        notification: NotificationID, countsUntil: Int64
    )] {
        try locked.withLock { inner throws(RulesStoreError) in
            var found = try inner.connection.notifications(of: key, countingAfter: since, policy: policy)
            // The pending notifications that may match, and those the file matched that have
            // pending facts (which may change their state, or their subject to one that does not).
            var merging = Set(inner.overlay.candidates(for: key))
            for n in found.keys where inner.overlay.isPending(n) { merging.insert(n) }
            for n in merging {
                guard let pending = inner.overlay.state(of: n) else { continue }
                var stored = found[n]
                if stored == nil { stored = try inner.connection.state(of: n) }
                let merged = stored.map { $0.merged(with: pending) } ?? pending
                if let subject = merged.subject, key.matches(subject), let until = merged.countsUntil(sendLimit: policy.sendLimit), until > since {
                    found[n] = merged
                } else {
                    found[n] = nil
                }
            }
            return found.compactMap { n, state in state.countsUntil(sendLimit: policy.sendLimit).map { (n, $0) } }
        }
    }
}

extension RulesStore: RulesStateStore {}
