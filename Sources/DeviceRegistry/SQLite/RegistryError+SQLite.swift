import SQLite

extension RegistryError: SQLiteFailure {
    /// A SQLite failure as the registry reports it: the same kind (``Code/unusableFile`` for a
    /// file that is not a database or is damaged, ``Code/io`` for the rest) and SQLite's words.
    package init(_ error: SQLiteError) {
        switch error.code {
        case .unusableFile: self.init(code: .unusableFile, message: error.message)
        case .io: self.init(code: .io, message: error.message)
        }
    }
}

/// Runs SQLite calls for the registry: a failure is reported as ``RegistryError``.
func sqlite<T>(_ body: () throws(SQLiteError) -> T) throws(RegistryError) -> T {
    do { return try body() } catch { throw RegistryError(error) }
}
