import SQLite

/// The rules store's tables (docs/rules-state.md, "The rules store"), created on first open, and
/// the checks on a file that exists.
///
/// - `notifications`: one row per notification and state partition, its merged facts in
///   ``NotificationStateCodec``'s form (`state`), beside the columns the reads look up: the
///   subject's user, category and mapping (`mapping` is NULL until a reservation was read: such
///   a row matches no cap key), `latest`, the latest time of an attempt that is not released
///   (NULL when it counts toward no cap; it counts until `latest` or `latest + sendLimit`, so
///   `latest > since − sendLimit` finds every one counting after `since`), and `expires`.
/// - `subject_devices`: the subject's device keys, for `[device]` caps.
/// - `device_pushes`: acknowledged device pushes (dedup), each at its latest acknowledgement.
/// - `claims`: per partition, the latest claim applied (its offset, owner, time, partition count).
/// - `offsets`: per partition, the next changelog offset to read, written in the same
///   transaction as the facts before it: the file is a prefix of each partition's changelog.
enum RulesSchema {
    /// `PRAGMA user_version` of the files this code writes. A file with another version is refused.
    static let version: Int64 = 1
    /// `PRAGMA application_id` ("PBRS"): tells a rules store from another SQLite file (the registry's).
    static let applicationID: Int64 = 0x5042_5253

    static let tables = """
        CREATE TABLE IF NOT EXISTS notifications (
            n BLOB NOT NULL, part INTEGER NOT NULL, state BLOB NOT NULL,
            user TEXT, category TEXT, mapping TEXT, latest INTEGER, expires INTEGER NOT NULL,
            PRIMARY KEY (n, part)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS notifications_user ON notifications (user, latest);
        CREATE INDEX IF NOT EXISTS notifications_category ON notifications (category, latest);
        CREATE INDEX IF NOT EXISTS notifications_mapping ON notifications (mapping, latest);
        CREATE INDEX IF NOT EXISTS notifications_expiry ON notifications (expires);
        CREATE TABLE IF NOT EXISTS subject_devices (
            n BLOB NOT NULL, part INTEGER NOT NULL, device INTEGER NOT NULL, PRIMARY KEY (n, part, device)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS subject_devices_device ON subject_devices (device);
        CREATE TABLE IF NOT EXISTS device_pushes (
            d INTEGER NOT NULL, part INTEGER NOT NULL, at INTEGER NOT NULL, expires INTEGER NOT NULL, PRIMARY KEY (d, part)
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS device_pushes_expiry ON device_pushes (expires);
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

    /// Makes a new file ready, or checks one that exists: WAL journal, `synchronous=NORMAL` (a
    /// power cut loses at most the last transactions, whose facts are read again from the
    /// stored offsets), as the registry's file.
    static func prepare(writer c: SQLiteConnection) throws(RulesStoreError) {
        let version = try integer(c, "PRAGMA user_version")
        if version == 0 {
            guard try integer(c, "SELECT count(*) FROM sqlite_schema") == 0 else {
                throw RulesStoreError(code: .unusableFile, message: "\(c.path) is a SQLite database of something else, not a rules store")
            }
            try sqlite { () throws(SQLiteError) in try c.execute("PRAGMA page_size = 8192") }
        } else {
            try check(c)
        }
        try sqlite { () throws(SQLiteError) in
            try c.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
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
