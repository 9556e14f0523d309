import Rules
import SQLite

/// The rules store's one connection with its statements prepared: the reads here, the writes in
/// `RulesConnection+Write.swift`.
///
/// `@unchecked Sendable`: ``RulesStore`` keeps it behind its `Mutex` and uses it only inside
/// that lock, so one thread at a time touches it and its statements.
final class RulesConnection: @unchecked Sendable {
    let connection: SQLiteConnection
    let readOnly: Bool
    let selectState: SQLiteStatement
    let selectStates: SQLiteStatement
    let selectOffset: SQLiteStatement
    let selectClaim: SQLiteStatement
    /// The statements that write; nil when opened read-only.
    var writes: RulesWrites?
    /// The cap-key queries, one per shape of key (which dimensions it has, which are NULL).
    private var keyQueries: [String: SQLiteStatement] = [:]

    init(path: String, cacheKiB: Int, readOnly: Bool, walPages: Int) throws(RulesStoreError) {
        let c = try sqlite { () throws(SQLiteError) in try SQLiteConnection(path: path, readOnly: readOnly) }
        try RulesSchema.configure(c, cacheKiB: cacheKiB)
        if readOnly { try RulesSchema.check(c) } else { try RulesSchema.prepare(writer: c, walPages: walPages) }
        connection = c
        self.readOnly = readOnly
        do throws(SQLiteError) {
            selectState = try c.prepare("SELECT id, state FROM notifications WHERE n = ?1 AND part = ?2")
            selectStates = try c.prepare("SELECT part, state FROM notifications WHERE n = ?1")
            selectOffset = try c.prepare("SELECT next FROM offsets WHERE part = ?1")
            selectClaim = try c.prepare("SELECT offset, owner, at, partition_count FROM claims WHERE part = ?1")
        } catch { throw RulesStoreError(error) }
        try prepareWrites()
    }

    var path: String { connection.path }

    /// The pages this connection's commits have appended to the WAL since it was opened.
    var pagesWritten: Int { connection.pagesWritten }

    /// The merge of `n`'s rows over every partition (one, unless subjects moved between partitions).
    func state(of n: NotificationID) throws(RulesStoreError) -> NotificationState? {
        defer { selectStates.reset() }
        var merged: NotificationState?
        try sqlite { () throws(SQLiteError) in try selectStates.bind(.blob(n.bytes)) }
        while try sqlite({ () throws(SQLiteError) in try selectStates.step() }) {
            let part = Int32(truncatingIfNeeded: selectStates.int64(0))
            let s = try decodeState(selectStates, column: 1, n, part)
            merged = merged.map { $0.merged(with: s) } ?? s
        }
        return merged
    }

    /// `n`'s state in `part`, nil when there is none.
    func state(of n: NotificationID, partition part: Int32) throws(RulesStoreError) -> NotificationState? {
        try row(of: n, partition: part)?.state
    }

    /// `n`'s row in `part` (its `id` and state), nil when there is none.
    func row(of n: NotificationID, partition part: Int32) throws(RulesStoreError) -> (id: Int64, state: NotificationState)? {
        defer { selectState.reset() }
        let found = try sqlite { () throws(SQLiteError) in
            try selectState.bind(.blob(n.bytes), .integer(Int64(part)))
            return try selectState.step()
        }
        return found ? (selectState.int64(0), try decodeState(selectState, column: 1, n, part)) : nil
    }

    /// Every notification `key` matches that counts until after `since`: the rows ``keyQuery(_:)``
    /// finds, whose `latest` may count, then exactly (``NotificationState/countsUntil(sendLimit:)``,
    /// the subject: its category, mapping, device), so the answer is ``InMemoryRulesState``'s.
    func notifications(of key: CapKey, countingAfter since: Int64, policy: RulesPolicy) throws(RulesStoreError) -> [NotificationID: NotificationState]
    {
        let statement = try keyQuery(key)
        defer { statement.reset() }
        // since − sendLimit, saturating (a wrapped bound would find nothing).
        let limit = max(policy.sendLimit, 0)
        let bound = since < Int64.min + limit ? Int64.min : since - limit
        try sqlite { () throws(SQLiteError) in
            try statement.bind(.integer(Int64(bitPattern: key.device?.value ?? 0)), .text((key.user ?? nil) ?? ""), .integer(bound))
        }
        var result: [NotificationID: NotificationState] = [:]
        while try sqlite({ () throws(SQLiteError) in try statement.step() }) {
            let n = try notificationID(statement, column: 0)
            let part = Int32(truncatingIfNeeded: statement.int64(1))
            let s = try decodeState(statement, column: 2, n, part)
            result[n] = result[n].map { $0.merged(with: s) } ?? s
        }
        return result.filter { _, s in
            guard let subject = s.subject, key.matches(subject), let until = s.countsUntil(sendLimit: policy.sendLimit) else { return false }
            return until > since
        }
    }

    func nextOffset(_ part: Int32) throws(RulesStoreError) -> Int64? {
        defer { selectOffset.reset() }
        return try sqlite { () throws(SQLiteError) in
            try selectOffset.bind(.integer(Int64(part)))
            return try selectOffset.step() ? selectOffset.int64(0) : nil
        }
    }

    func claim(_ part: Int32) throws(RulesStoreError) -> StoredClaim? {
        defer { selectClaim.reset() }
        return try sqlite { () throws(SQLiteError) in
            try selectClaim.bind(.integer(Int64(part)))
            guard try selectClaim.step() else { return nil }
            let claim = Claim(at: selectClaim.int64(2), owner: selectClaim.text(1), partitionCount: Int32(truncatingIfNeeded: selectClaim.int64(3)))
            return StoredClaim(offset: selectClaim.int64(0), claim: claim)
        }
    }

    /// The prepared ``keySQL(_:)`` for keys of `key`'s shape.
    private func keyQuery(_ key: CapKey) throws(RulesStoreError) -> SQLiteStatement {
        let sql = Self.keySQL(key)
        if let prepared = keyQueries[sql] { return prepared }
        let prepared = try sqlite { () throws(SQLiteError) in try connection.prepare(sql) }
        keyQueries[sql] = prepared
        return prepared
    }

    /// The query for keys of `key`'s shape: the rows whose `latest` is above ?3 (the least that
    /// may count) among those of its user (?2) when it has one (a device, a category, a mapping
    /// are filtered from the state); else of its device (?1): the notifications of each user
    /// the device had (`device_users`), and those without a user that listed it
    /// (`subject_devices`); else (no cap has such a key) every row.
    static func keySQL(_ key: CapKey) -> String {
        let rows = "SELECT t.n, t.part, t.state FROM "
        switch (key.user, key.device) {
        case (.some(let user), _):
            return rows + "notifications t WHERE t.user " + (user == nil ? "IS NULL" : "= ?2") + " AND t.latest > ?3"
        case (nil, .some):
            return rows + "device_users du CROSS JOIN notifications t ON t.user = du.user AND t.latest > ?3 WHERE du.device = ?1 UNION ALL "
                + rows + "subject_devices sd CROSS JOIN notifications t ON t.id = sd.id WHERE sd.device = ?1 AND +t.latest > ?3"
        case (nil, nil):
            return rows + "notifications t WHERE t.latest > ?3"
        }
    }

    func decodeState(_ s: SQLiteStatement, column: Int32, _ n: NotificationID, _ part: Int32) throws(RulesStoreError) -> NotificationState {
        do {
            return try s.withBlob(column) { bytes throws(FactCodecError) in try NotificationStateCodec.decode(bytes) }
        } catch {
            throw RulesStoreError(code: .damagedRow, message: "\(path): partition \(part), notification \(n): \(error.message)")
        }
    }

    func notificationID(_ s: SQLiteStatement, column: Int32) throws(RulesStoreError) -> NotificationID {
        let bytes = s.withBlob(column) { Array($0) }
        guard bytes.count == 16 else { throw RulesStoreError(code: .damagedRow, message: "\(path): a notification key of \(bytes.count) bytes") }
        return NotificationID(bytes: bytes)
    }
}

/// A partition's latest claim the store applied, and the changelog offset it was at.
public struct StoredClaim: Hashable, Sendable {
    public var offset: Int64
    public var claim: Claim

    public init(offset: Int64, claim: Claim) {
        self.offset = offset
        self.claim = claim
    }
}

extension NotificationID {
    /// From the 16 bytes ``bytes`` gives.
    init(bytes: [UInt8]) {
        func half(_ start: Int) -> UInt64 { bytes[start..<start + 8].reduce(0) { $0 << 8 | UInt64($1) } }
        self.init(high: half(0), low: half(8))
    }
}
