import SQLite

/// The store's tables, created on first open, and the checks on a file that exists.
///
/// `users` holds one row per user, its devices in ``DeviceListCodec``'s form; `offsets` the next
/// offset to read per partition of the topic that filled it, written in the same transaction as
/// the records before it; `dead_devices` the devices FCM reported dead that a record may still
/// list until the backend has deleted them; `counts` the user and device totals.
enum RegistrySchema {
    /// `PRAGMA user_version` of the files this code writes. A file with another version is refused.
    static let version: Int64 = 1

    /// 8 KiB pages: a user's row (two tokens, about 400 bytes) stays under 1/20 of a page, where
    /// SQLite's documentation puts the limit for WITHOUT ROWID tables.
    static let pageSize = 8192

    /// A user's row: read with ``SQLiteStatement/devicesRow(of:_:)``.
    static let selectDevices = "SELECT devices FROM users WHERE user = ?1"

    /// The `counts` row of a file whose every record was stored with its preferences: a file
    /// filled by a pushbridge before preferences existed lacks it.
    static let preferencesMark = "preferences"

    static let tables = """
        CREATE TABLE IF NOT EXISTS users (user TEXT PRIMARY KEY NOT NULL, devices BLOB NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS offsets (
            topic TEXT NOT NULL, partition INTEGER NOT NULL, next INTEGER NOT NULL, PRIMARY KEY (topic, partition)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS dead_devices (user TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (user, id)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS counts (name TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;
        """

    /// Settings every connection gets: a bounded page cache of `cacheKiB`, no memory mapping
    /// (mapped pages would count as the process's resident memory), waits on a busy file.
    static func configure(_ c: SQLiteConnection, cacheKiB: Int) throws(RegistryError) {
        try sqlite { () throws(SQLiteError) in
            try c.execute("PRAGMA cache_size = -\(max(cacheKiB, 256)); PRAGMA mmap_size = 0; PRAGMA busy_timeout = 10000")
        }
    }

    /// Makes a new file ready, or checks one that exists: WAL journal, `synchronous=NORMAL` (a
    /// commit is durable once the WAL is synced at a checkpoint; a power cut loses at most the
    /// last transactions, which the follower reads again from their stored offsets).
    static func prepare(writer c: SQLiteConnection) throws(RegistryError) {
        let version = try userVersion(c)
        if version == 0 {
            guard try tableCount(c) == 0 else {
                throw RegistryError(code: .unusableFile, message: "\(c.path) is a SQLite database of something else, not a registry file")
            }
            // page_size only takes effect before the first table and before WAL.
            try sqlite { () throws(SQLiteError) in try c.execute("PRAGMA page_size = \(pageSize)") }
        } else if version != self.version {
            throw RegistryError(
                code: .unusableFile,
                message:
                    "\(c.path) has registry format \(version); this pushbridge writes format \(self.version). Delete the file: it is loaded again from the topic"
            )
        }
        try sqlite { () throws(SQLiteError) in
            try c.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
            try c.execute(tables)
            if version == 0 {
                try c.execute("PRAGMA user_version = \(self.version)")
                // A new file stores preferences from its first record (RegistryWriter.rereadForPreferences).
                try c.execute("INSERT OR IGNORE INTO counts (name, value) VALUES ('\(preferencesMark)', 1)")
            }
        }
    }

    /// Checks a file opened read-only.
    static func check(reader c: SQLiteConnection) throws(RegistryError) {
        let version = try userVersion(c)
        guard version == self.version else {
            throw RegistryError(code: .unusableFile, message: "\(c.path) is not a registry file of format \(self.version) (found \(version))")
        }
    }

    private static func tableCount(_ c: SQLiteConnection) throws(RegistryError) -> Int64 {
        try integer(c, "SELECT count(*) FROM sqlite_schema")
    }

    private static func userVersion(_ c: SQLiteConnection) throws(RegistryError) -> Int64 {
        try integer(c, "PRAGMA user_version")
    }

    /// The first column of the first row of `sql`, 0 when there is none.
    private static func integer(_ c: SQLiteConnection, _ sql: String) throws(RegistryError) -> Int64 {
        try sqlite { () throws(SQLiteError) in
            let s = try c.prepare(sql)
            defer { s.reset() }
            return try s.step() ? s.int64(0) : 0
        }
    }
}

extension SQLiteStatement {
    /// ``RegistrySchema/selectDevices``, prepared: `read` of `user`'s row (its devices blob,
    /// ``DeviceListCodec``'s form), or nil for a user the store does not know. Reset afterwards,
    /// which ends a reader's read transaction, so the WAL can be checkpointed past it.
    func devicesRow<T>(of user: String, _ read: (UnsafeRawBufferPointer) throws(RegistryError) -> T) throws(RegistryError) -> T? {
        defer { reset() }
        guard
            try sqlite({ () throws(SQLiteError) in
                try bind(.text(user))
                return try step()
            })
        else { return nil }
        return try withBlob(0, read)
    }
}
