import SQLite

/// Why the rules store failed: `code` says what kind of failure, `message` what and where (the
/// file, the partition, the notification, and SQLite's or the codec's own words).
public struct RulesStoreError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        /// The file is not a SQLite database, is damaged, is not a rules store, or was written
        /// by another format version. Delete it: the owners restore from the changelog.
        public static let unusableFile = Code(name: "unusable file")
        /// The file cannot be opened, read or written (permissions, disk full, a missing folder).
        public static let io = Code(name: "I/O")
        /// A row's merged state does not decode (``NotificationStateCodec``).
        public static let damagedRow = Code(name: "damaged row")
        /// A write to a store opened read-only.
        public static let readOnly = Code(name: "read-only")
        /// A batch whose offsets do not increase.
        public static let outOfOrder = Code(name: "out of order")
        public var description: String { name }
    }

    public var code: Code
    public var message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "rules store: \(message)" }
}

extension RulesStoreError: SQLiteFailure {
    /// A SQLite failure as the store reports it: the same kind and SQLite's words.
    package init(_ error: SQLiteError) {
        switch error.code {
        case .unusableFile: self.init(code: .unusableFile, message: error.message)
        case .io: self.init(code: .io, message: error.message)
        }
    }
}

/// Runs SQLite calls for the store: a failure is reported as ``RulesStoreError``.
func sqlite<T>(_ body: () throws(SQLiteError) -> T) throws(RulesStoreError) -> T {
    do { return try body() } catch { throw RulesStoreError(error) }
}
