/// Why a SQLite call failed: `code` says what kind of failure it is, `message` keeps SQLite's own
/// words (prefixed with the file's path), `resultCode` SQLite's extended result code.
///
/// A module that stores something in SQLite maps it to its own error (``SQLiteFailure``), so its
/// users see that module's error type with SQLite's words in it.
package struct SQLiteError: Error, Sendable, CustomStringConvertible {
    package enum Code: Hashable, Sendable {
        /// The file is not a SQLite database, is damaged, or has an unknown format
        /// (`SQLITE_NOTADB`, `SQLITE_CORRUPT`, `SQLITE_FORMAT`).
        case unusableFile
        /// Any other failure: the file cannot be opened, read or written (permissions, disk full,
        /// a missing folder), a busy file, a statement SQLite refuses.
        case io
    }

    package var code: Code
    package var message: String
    /// SQLite's extended result code (`SQLITE_IOERR_WRITE`, …).
    package var resultCode: Int32

    package init(code: Code, message: String, resultCode: Int32) {
        self.code = code
        self.message = message
        self.resultCode = resultCode
    }

    package var description: String { message }
}

/// An error type that a SQLite failure converts into: ``SQLiteConnection/transaction(_:)`` runs a
/// body throwing it, and reports its own `BEGIN`/`COMMIT` failures as it.
package protocol SQLiteFailure: Error {
    init(_ error: SQLiteError)
}

extension SQLiteError: SQLiteFailure {
    package init(_ error: SQLiteError) { self = error }
}
