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
    let selectPush: SQLiteStatement
    let selectOffset: SQLiteStatement
    let selectClaim: SQLiteStatement
    /// The statements that write; nil when opened read-only.
    var writes: RulesWrites?
    /// The cap-key queries, one per shape of key (which dimensions it has, which are NULL).
    private var keyQueries: [String: SQLiteStatement] = [:]

    init(path: String, cacheKiB: Int, readOnly: Bool) throws(RulesStoreError) {
        let c = try sqlite { () throws(SQLiteError) in try SQLiteConnection(path: path, readOnly: readOnly) }
        try RulesSchema.configure(c, cacheKiB: cacheKiB)
        if readOnly { try RulesSchema.check(c) } else { try RulesSchema.prepare(writer: c) }
        connection = c
        self.readOnly = readOnly
        do throws(SQLiteError) {
            selectState = try c.prepare("SELECT state FROM notifications WHERE n = ?1 AND part = ?2")
            selectStates = try c.prepare("SELECT part, state FROM notifications WHERE n = ?1")
            selectPush = try c.prepare("SELECT max(at) FROM device_pushes WHERE d = ?1")
            selectOffset = try c.prepare("SELECT next FROM offsets WHERE part = ?1")
            selectClaim = try c.prepare("SELECT offset, owner, at, partition_count FROM claims WHERE part = ?1")
        } catch { throw RulesStoreError(error) }
        try prepareWrites()
    }

    var path: String { connection.path }

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

    /// `n`'s row in `part`, nil when there is none.
    func state(of n: NotificationID, partition part: Int32) throws(RulesStoreError) -> NotificationState? {
        defer { selectState.reset() }
        let found = try sqlite { () throws(SQLiteError) in
            try selectState.bind(.blob(n.bytes), .integer(Int64(part)))
            return try selectState.step()
        }
        return found ? try decodeState(selectState, column: 0, n, part) : nil
    }

    /// Every notification `key` matches that counts until after `since`: the indexed rows whose
    /// `latest` may count, then exactly (``NotificationState/countsUntil(sendLimit:)``, the
    /// subject), so the answer is ``InMemoryRulesState``'s.
    func notifications(of key: CapKey, countingAfter since: Int64, policy: RulesPolicy) throws(RulesStoreError) -> [NotificationID: NotificationState]
    {
        let statement = try keyQuery(key)
        defer { statement.reset() }
        let bound = since &- max(policy.sendLimit, 0)
        try sqlite { () throws(SQLiteError) in
            try statement.bind(
                .integer(Int64(bitPattern: key.device?.value ?? 0)), .text((key.user ?? nil) ?? ""), .text((key.category ?? nil) ?? ""),
                .text(key.mapping ?? ""), .integer(bound))
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

    /// When FCM last acknowledged `push`, in any partition.
    func acknowledgement(of push: DevicePushID) throws(RulesStoreError) -> Int64? {
        defer { selectPush.reset() }
        return try sqlite { () throws(SQLiteError) in
            try selectPush.bind(.integer(Int64(bitPattern: push.value)))
            return try selectPush.step() && !selectPush.isNull(0) ? selectPush.int64(0) : nil
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

    /// The query for keys of `key`'s shape. Parameters: ?1 device, ?2 user, ?3 category,
    /// ?4 mapping, ?5 the least `latest`; a shape leaves out those it does not use.
    ///
    /// One index leads, the most selective the key has: the device's, else `(user, latest)`,
    /// else category's, else mapping's; a `+` keeps SQLite off the others (without statistics
    /// it may take `category = 'social'`, a scan of every user's notifications).
    private func keyQuery(_ key: CapKey) throws(RulesStoreError) -> SQLiteStatement {
        let lead = key.device != nil ? "device" : key.user != nil ? "user" : key.category != nil ? "category" : key.mapping != nil ? "mapping" : ""
        func term(_ name: String, _ condition: String) -> String { (lead == name ? " AND t." : " AND +t.") + name + condition }
        var sql = "SELECT t.n, t.part, t.state FROM "
        sql +=
            key.device == nil
            ? "notifications t WHERE 1" : "subject_devices sd CROSS JOIN notifications t USING (n, part) WHERE sd.device = ?1"
        if let user = key.user { sql += term("user", user == nil ? " IS NULL" : " = ?2") }
        if let category = key.category { sql += term("category", category == nil ? " IS NULL" : " = ?3") }
        if key.mapping != nil { sql += term("mapping", " = ?4") }
        sql += " AND +t.mapping IS NOT NULL" + (lead == "device" ? " AND +t.latest > ?5" : " AND t.latest > ?5")
        if let prepared = keyQueries[sql] { return prepared }
        let prepared = try sqlite { () throws(SQLiteError) in try connection.prepare(sql) }
        keyQueries[sql] = prepared
        return prepared
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
