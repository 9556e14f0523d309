import SQLite

/// Copies the rules store's WAL into its file (a checkpoint) from a connection of its own, so
/// that the store's lock is not held meanwhile: with SQLite's automatic checkpoints, the commit
/// that crossed the threshold made the checkpoint, and every read waited behind it (a checkpoint
/// of 64 MiB took 140–290 ms on the benchmark's machine, docs/benchmarks.md#rules-store).
///
/// A checkpoint is due once the writer has appended `walPages` pages to the WAL since the last
/// one: a page the tail writes again and again in that time is copied once, and the syncs
/// (the WAL's, then the file's) are rare. It waits for no reader or writer
/// (``SQLiteConnection/checkpoint()``); the writer starts the WAL over at its next commit once
/// everything was copied.
///
/// `@unchecked Sendable`: ``RulesStore`` keeps it behind a `Mutex` of its own.
final class RulesCheckpointer: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let walPages: Int
    /// The writer's ``SQLiteConnection/pagesWritten`` at the last checkpoint.
    private var checkpointedAt = 0

    /// Opens a second connection to the rules store at `path` (the writer made it ready).
    init(path: String, walPages: Int) throws(RulesStoreError) {
        let c = try sqlite { () throws(SQLiteError) in try SQLiteConnection(path: path, readOnly: false) }
        try RulesSchema.configure(c, cacheKiB: 256)
        try sqlite { () throws(SQLiteError) in try c.execute("PRAGMA synchronous = NORMAL") }
        connection = c
        self.walPages = walPages
    }

    /// Checkpoints when the writer, which has written `written` pages since it was opened, has
    /// appended `walPages` since the last checkpoint.
    func checkpoint(writerPages written: Int) throws(RulesStoreError) {
        guard written - checkpointedAt >= walPages else { return }
        try sqlite { () throws(SQLiteError) in try connection.checkpoint() }
        checkpointedAt = written
    }
}
