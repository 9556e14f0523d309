import SQLite

/// The rules store's tables (docs/rules-state.md, "The rules store"), created on first open, and
/// the checks on a file that exists.
///
/// Each notification's write touches few B-trees at random keys (a hash, a user, a device), as
/// each such insert costs a page written to the WAL and again at the checkpoint
/// (docs/benchmarks.md#rules-store):
///
/// - `notifications`: one row per notification and state partition, in the order they were
///   first written (`id`), so that a notification's later facts (its outcome, a few hundred
///   notifications after its reservation) update a recent page, not one at a random place. Its
///   merged facts in ``NotificationStateCodec``'s form (`state`: the subject, the attempts, the
///   acknowledged device pushes that dedup reads), beside the columns the reads look up: the
///   subject's user, `latest`, and `expires` (the state's, for the sweep). `latest` is the latest
///   time of an attempt that is not released, NULL when the row counts toward no cap (no subject
///   yet, or every attempt released); a notification counts until `latest` or
///   `latest + sendLimit`, so `latest > since − sendLimit` finds every one counting after `since`
///   (and a few more, which the reads filter out). Both are rounded up to the minute
///   (``granularity``): an outcome that follows its reservation within the minute changes the
///   row's state only, and no index row moves.
/// - `notifications_n`: a notification's row by its key (N and partition), the one random insert
///   a notification costs for itself.
/// - `notifications_user` (partial: rows that may count): the cap keys with a user. Category and
///   mapping are not indexed: a cap has `user` or `device` in its `by` (design §3, its load-time
///   checks), and the reads filter them from the state exactly.
/// - `device_users`: for `[device]` caps, each device with each user whose notifications went to
///   it: written once per pair (and again when its `expires` falls behind a notification's),
///   where a row per notification and device would cost two random inserts per notification.
///   A `[device]` key reads the notifications of those users and keeps the ones whose subject
///   lists the device. `expires` is at least the latest expiry of those notifications.
/// - `subject_devices`: the devices of a subject without a user (a token target), per
///   notification (its `id`; an `id` SQLite gives again after a row went leads a read to a
///   notification the exact filter drops).
/// - `claims`: per partition, the latest claim applied (its offset, owner, time, partition count).
/// - `offsets`: per partition, the next changelog offset to read, written in the same
///   transaction as the facts before it: the file is a prefix of each partition's changelog.
///
/// Format 1 (until 2026-11-29) kept notifications in key order, also indexed category and
/// mapping, and kept a row per device and notification and one per acknowledged device push: it
/// is refused (delete it, the owners restore from the changelog).
enum RulesSchema {
    /// `PRAGMA user_version` of the files this code writes. A file with another version is refused.
    static let version: Int64 = 2
    /// `PRAGMA application_id` ("PBRS"): tells a rules store from another SQLite file (the registry's).
    static let applicationID: Int64 = 0x5042_5253
    /// 4 KiB pages: a random insert writes one page (and a split its neighbours) to the WAL; 8 KiB
    /// pages wrote twice the bytes for the same inserts (docs/benchmarks.md#rules-store).
    static let pageSize = 4096
    /// `latest` and `expires` are rounded up to a multiple of this (ms): a row is swept up to a
    /// minute after its expiry.
    static let granularity: Int64 = 60_000
    /// A `device_users` row's `expires` is set this far (ms) past the notification's that wrote it,
    /// so that later notifications of the pair rarely have to rewrite it.
    static let deviceUserSlack: Int64 = 86_400_000

    static let tables = """
        CREATE TABLE IF NOT EXISTS notifications (
            id INTEGER PRIMARY KEY, n BLOB NOT NULL, part INTEGER NOT NULL, state BLOB NOT NULL, user TEXT, latest INTEGER,
            expires INTEGER NOT NULL
        );
        CREATE UNIQUE INDEX IF NOT EXISTS notifications_n ON notifications (n, part);
        CREATE INDEX IF NOT EXISTS notifications_user ON notifications (user, latest) WHERE latest IS NOT NULL;
        CREATE INDEX IF NOT EXISTS notifications_expiry ON notifications (expires);
        CREATE TABLE IF NOT EXISTS device_users (
            device INTEGER NOT NULL, user TEXT NOT NULL, expires INTEGER NOT NULL, PRIMARY KEY (device, user)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS device_users_expiry ON device_users (expires);
        CREATE TABLE IF NOT EXISTS subject_devices (device INTEGER NOT NULL, id INTEGER NOT NULL, PRIMARY KEY (device, id)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS claims (
            part INTEGER PRIMARY KEY NOT NULL, offset INTEGER NOT NULL, owner TEXT NOT NULL, at INTEGER NOT NULL,
            partition_count INTEGER NOT NULL
        );
        CREATE TABLE IF NOT EXISTS offsets (part INTEGER PRIMARY KEY NOT NULL, next INTEGER NOT NULL);
        """

    /// Settings every connection gets: a bounded page cache, no memory mapping (mapped pages
    /// would count as the process's resident memory), waits on a busy file.
    static func configure(_ c: SQLiteConnection, cacheKiB: Int) throws(RulesStoreError) {
        try sqlite { () throws(SQLiteError) in
            try c.execute("PRAGMA cache_size = -\(max(cacheKiB, 256)); PRAGMA mmap_size = 0; PRAGMA busy_timeout = 10000")
        }
    }

    /// Makes a new file ready, or checks one that exists: WAL journal with `synchronous=NORMAL`,
    /// no checkpoints by this connection (``RulesCheckpointer`` makes them, outside the store's
    /// lock), the WAL cut back to `walPages` when it starts over.
    ///
    /// `synchronous=NORMAL` syncs the WAL only at checkpoints: a power cut (not a crash of the
    /// process) may lose the last transactions, never part of one, and each carries its
    /// partition's next offset, so the tail reads their facts again. The store is a cache of
    /// the changelog: losing its tail costs a re-read, never a wrong answer.
    static func prepare(writer c: SQLiteConnection, walPages: Int) throws(RulesStoreError) {
        let version = try integer(c, "PRAGMA user_version")
        if version == 0 {
            guard try integer(c, "SELECT count(*) FROM sqlite_schema") == 0 else {
                throw RulesStoreError(code: .unusableFile, message: "\(c.path) is a SQLite database of something else, not a rules store")
            }
            // page_size only takes effect before the first table and before WAL.
            try sqlite { () throws(SQLiteError) in try c.execute("PRAGMA page_size = \(pageSize)") }
        } else {
            try check(c)
        }
        try sqlite { () throws(SQLiteError) in
            try c.execute(
                """
                PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = 0;
                PRAGMA journal_size_limit = \(walPages * pageSize)
                """)
            try c.execute(tables)
            if version == 0 { try c.execute("PRAGMA application_id = \(applicationID); PRAGMA user_version = \(self.version)") }
        }
    }

    /// Checks that a file that exists is a rules store of this format.
    static func check(_ c: SQLiteConnection) throws(RulesStoreError) {
        let application = try integer(c, "PRAGMA application_id")
        let version = try integer(c, "PRAGMA user_version")
        guard application == applicationID else {
            throw RulesStoreError(code: .unusableFile, message: "\(c.path) is not a rules store (application_id \(application))")
        }
        guard version == self.version else {
            throw RulesStoreError(
                code: .unusableFile,
                message:
                    "\(c.path) has rules store format \(version); this pushbridge reads format \(self.version). Delete it: the owners restore from the changelog"
            )
        }
    }

    /// The first column of the first row of `sql`, 0 when there is none.
    static func integer(_ c: SQLiteConnection, _ sql: String) throws(RulesStoreError) -> Int64 {
        try sqlite { () throws(SQLiteError) in
            let s = try c.prepare(sql)
            defer { s.reset() }
            return try s.step() ? s.int64(0) : 0
        }
    }
}
