import CSQLite

/// One SQLite connection (`sqlite3*`), closed in `deinit`.
///
/// Not `Sendable`: opened in multi-thread mode (`SQLITE_OPEN_NOMUTEX`), a connection and its
/// statements are used by one thread at a time. Its owner keeps it behind a lock (the registry's
/// `RegistryStore` keeps each one behind a `Mutex`).
package final class SQLiteConnection {
    private let handle: OpaquePointer
    package let path: String

    /// Opens (or, unless `readOnly`, creates) the database at `path`.
    /// - Throws: ``SQLiteError`` when SQLite cannot open it.
    package init(path: String, readOnly: Bool) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close_v2(db)
            throw SQLiteConnection.error(rc, "cannot open \(path): \(message)")
        }
        handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        // v2: statements still alive keep the connection until they are finalized.
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    package func execute(_ sql: String) throws(SQLiteError) {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? lastMessage
            sqlite3_free(message)
            throw error(rc, text)
        }
    }

    package func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw error(rc, lastMessage)
        }
        return SQLiteStatement(statement, connection: self)
    }

    /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`): committed when it returns,
    /// rolled back when it throws. `BEGIN` and `COMMIT` failures are reported as `Failure`.
    package func transaction<T, Failure: SQLiteFailure>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        do { try execute("BEGIN IMMEDIATE") } catch { throw Failure(error) }
        do throws(Failure) {
            let result = try body()
            do { try execute("COMMIT") } catch { throw Failure(error) }
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { try? execute("ROLLBACK") }
            throw error
        }
    }

    /// The rows the last `INSERT`, `UPDATE` or `DELETE` on this connection changed.
    package var changes: Int { Int(sqlite3_changes64(handle)) }

    /// The rowid of the row the last successful `INSERT` on this connection added.
    package var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The pages this connection has written since it was opened: in WAL mode, the frames its
    /// commits appended to the WAL (`SQLITE_DBSTATUS_CACHE_WRITE`).
    package var pagesWritten: Int {
        var current: Int32 = 0
        var highest: Int32 = 0
        sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_WRITE, &current, &highest, 0)
        return Int(current)
    }

    /// Copies the WAL's committed pages into the database file (a checkpoint), without waiting
    /// for readers or writers: other connections read and commit meanwhile
    /// (`SQLITE_CHECKPOINT_PASSIVE`, https://www.sqlite.org/c3ref/wal_checkpoint_v2.html).
    package func checkpoint() throws(SQLiteError) {
        let rc = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        guard rc == SQLITE_OK else { throw error(rc, lastMessage) }
    }

    var lastMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func error(_ rc: Int32, _ message: String) -> SQLiteError {
        SQLiteConnection.error(rc, "\(path): \(message)")
    }

    /// Sorts a SQLite result code into ``SQLiteError/Code``.
    static func error(_ rc: Int32, _ message: String) -> SQLiteError {
        switch rc & 0xff {
        case SQLITE_NOTADB, SQLITE_CORRUPT, SQLITE_FORMAT:
            return SQLiteError(code: .unusableFile, message: message, resultCode: rc)
        default:
            return SQLiteError(code: .io, message: message, resultCode: rc)
        }
    }
}
