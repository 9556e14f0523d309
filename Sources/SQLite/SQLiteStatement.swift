import CSQLite

/// A prepared statement (`sqlite3_stmt*`), finalized in `deinit`. Used by the thread that
/// holds its connection; it keeps the connection alive.
package final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection

    init(_ handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// Binds `values` to the parameters `?1`, `?2`, … in order.
    package func bind(_ values: SQLiteValue...) throws(SQLiteError) {
        for (i, value) in values.enumerated() { try bindValue(value, index: Int32(i + 1)) }
    }

    /// Steps once: true when a row is ready to read, false when the statement is done.
    package func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error(rc, connection.lastMessage)
        }
    }

    /// Runs a statement that returns no rows, then resets it.
    package func run(_ values: SQLiteValue...) throws(SQLiteError) {
        defer { reset() }
        for (i, value) in values.enumerated() { try bindValue(value, index: Int32(i + 1)) }
        _ = try step()
    }

    private func bindValue(_ value: SQLiteValue, index: Int32) throws(SQLiteError) {
        let rc: Int32
        switch value {
        case .integer(let n):
            rc = sqlite3_bind_int64(handle, index, n)
        case .text(let s):
            var text = s
            rc = text.withUTF8 { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    // An empty string still needs a non-null pointer, or SQLite binds NULL.
                    guard let base = chars.baseAddress else { return csqlite_bind_text_transient(handle, index, "", 0) }
                    return csqlite_bind_text_transient(handle, index, base, Int32(chars.count))
                }
            }
        case .null:
            rc = sqlite3_bind_null(handle, index)
        case .blob(let bytes):
            rc = bytes.withUnsafeBytes { raw in
                // A zero-length blob still needs a non-null pointer, or SQLite binds NULL.
                csqlite_bind_blob_transient(handle, index, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(raw.count))
            }
        }
        guard rc == SQLITE_OK else { throw connection.error(rc, connection.lastMessage) }
    }

    /// Ends the statement's read (so a WAL reader holds no snapshot) and clears its bindings.
    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    /// Whether the column is NULL (an aggregate over no rows, a nullable column).
    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    package func text(_ column: Int32) -> String {
        guard let p = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: p, count: count), as: UTF8.self)
    }

    /// Lends the column's bytes to `body` without copying them; valid only inside `body`.
    package func withBlob<T, Failure: Error>(_ column: Int32, _ body: (UnsafeRawBufferPointer) throws(Failure) -> T) throws(Failure) -> T {
        let p = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        return try body(UnsafeRawBufferPointer(start: p, count: p == nil ? 0 : count))
    }
}

/// A value bound to a statement's parameter.
package enum SQLiteValue {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null
}
