import Rules
import SQLite

/// The statements that write, prepared once (nil on a read-only connection).
struct RulesWrites {
    let insertState: SQLiteStatement
    /// The state only, when the looked-up columns (``RowKeys``) stay: no index is touched
    /// (SQLite updates only the indexes of the columns an UPDATE sets).
    let updateState: SQLiteStatement
    let updateRow: SQLiteStatement
    let deleteState: SQLiteStatement
    let upsertDeviceUser: SQLiteStatement
    let insertSubjectDevice: SQLiteStatement
    let deleteSubjectDevice: SQLiteStatement
    let upsertClaim: SQLiteStatement
    let upsertOffset: SQLiteStatement
    let expiredStates: SQLiteStatement
    let deleteExpiredDeviceUsers: SQLiteStatement

    init(_ c: SQLiteConnection) throws(SQLiteError) {
        insertState = try c.prepare("INSERT INTO notifications (n, part, state, expires, user, latest) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        updateState = try c.prepare("UPDATE notifications SET state = ?2 WHERE id = ?1")
        updateRow = try c.prepare("UPDATE notifications SET state = ?2, expires = ?3, user = ?4, latest = ?5 WHERE id = ?1")
        deleteState = try c.prepare("DELETE FROM notifications WHERE id = ?1")
        // ?3 the notification's expiry, ?4 the row's (?3 + slack): rewritten only when behind ?3.
        upsertDeviceUser = try c.prepare(
            """
            INSERT INTO device_users (device, user, expires) VALUES (?1, ?2, ?4)
            ON CONFLICT (device, user) DO UPDATE SET expires = excluded.expires WHERE device_users.expires < ?3
            """)
        insertSubjectDevice = try c.prepare("INSERT OR IGNORE INTO subject_devices (device, id) VALUES (?1, ?2)")
        deleteSubjectDevice = try c.prepare("DELETE FROM subject_devices WHERE device = ?1 AND id = ?2")
        upsertClaim = try c.prepare(
            """
            INSERT INTO claims (part, offset, owner, at, partition_count) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (part) DO UPDATE SET offset = excluded.offset, owner = excluded.owner, at = excluded.at,
            partition_count = excluded.partition_count WHERE excluded.offset > claims.offset
            """)
        upsertOffset = try c.prepare("INSERT INTO offsets (part, next) VALUES (?1, ?2) ON CONFLICT (part) DO UPDATE SET next = excluded.next")
        expiredStates = try c.prepare("SELECT id, state FROM notifications WHERE expires <= ?1 LIMIT ?2")
        deleteExpiredDeviceUsers = try c.prepare(
            "DELETE FROM device_users WHERE (device, user) IN (SELECT device, user FROM device_users WHERE expires <= ?1 LIMIT ?2)")
    }
}

/// The columns of a notification's row that the reads and the sweep look up (``RulesSchema``),
/// times rounded up to ``RulesSchema/granularity``.
struct RowKeys: Equatable {
    var user: String?
    var latest: Int64?
    var expires: Int64

    init(_ s: NotificationState) {
        user = s.subject?.user
        let latest = s.subject == nil ? nil : s.attempts.map(\.state).filter { $0.status != .released }.map(\.at).max()
        self.latest = latest.map(Self.roundedUp)
        expires = Self.roundedUp(s.expires)
    }

    /// `t` rounded up to a multiple of ``RulesSchema/granularity`` (never below `t`).
    static func roundedUp(_ t: Int64) -> Int64 {
        let g = RulesSchema.granularity
        let r = t % g
        if r == 0 { return t }
        if t < 0 { return t - r }
        return t > Int64.max - g ? .max : t - r + g
    }
}

extension RulesConnection {
    func prepareWrites() throws(RulesStoreError) {
        guard !readOnly else { return }
        writes = try sqlite { () throws(SQLiteError) in try RulesWrites(connection) }
    }

    private func writer(_ what: String) throws(RulesStoreError) -> RulesWrites {
        guard let writes else { throw RulesStoreError(code: .readOnly, message: "\(path) is open read-only: cannot \(what)") }
        return writes
    }

    /// Applies the facts of changelog `part` at `facts`' offsets, skipping those below the
    /// stored next offset (already applied), and stores the next offset, in one transaction.
    /// Facts of one record share its offset; a record's facts come in one call.
    /// - Returns: the facts applied.
    func apply(partition part: Int32, facts: [(offset: Int64, fact: Fact)]) throws(RulesStoreError) -> [Fact] {
        let w = try writer("apply facts to partition \(part)")
        for (a, b) in zip(facts, facts.dropFirst()) where b.offset < a.offset {
            throw RulesStoreError(code: .outOfOrder, message: "\(path): partition \(part): offset \(b.offset) after \(a.offset)")
        }
        let next = try nextOffset(part) ?? .min
        let fresh = facts.filter { $0.offset >= next }
        guard let last = fresh.last else { return [] }
        var byNotification: [NotificationID: [NotificationFact]] = [:]
        var claim: (offset: Int64, claim: Claim)?
        for (offset, fact) in fresh {
            switch fact {
            case .claim(let c): claim = (offset, c)
            case .notification(let f): byNotification[f.notification, default: []].append(f)
            case .digest: break  // kept by the partition's owner in memory (DigestBook), not here; its offset counts below
            }
        }
        try connection.transaction { () throws(RulesStoreError) in
            // In key order: neighbouring keys share B-tree pages.
            for (n, facts) in byNotification.sorted(by: { $0.key < $1.key }) {
                let old = try row(of: n, partition: part)
                var new = old?.state ?? NotificationState()
                for f in facts { new.apply(f) }
                guard new != old?.state else { continue }
                try write(new, replacing: old, of: n, partition: part, w)
            }
            try sqlite { () throws(SQLiteError) in
                if let (offset, c) = claim {
                    try w.upsertClaim.run(.integer(Int64(part)), .integer(offset), .text(c.owner), .integer(c.at), .integer(Int64(c.partitionCount)))
                }
                try w.upsertOffset.run(.integer(Int64(part)), .integer(last.offset &+ 1))
            }
        }
        return fresh.map(\.fact)
    }

    /// Writes `s`, `n`'s new state in `part` (`old` its row before), with its cap-key rows.
    private func write(
        _ s: NotificationState, replacing row: (id: Int64, state: NotificationState)?, of n: NotificationID, partition part: Int32,
        _ w: RulesWrites
    ) throws(RulesStoreError) {
        let keys = RowKeys(s)
        let old = row.map { (state: $0.state, keys: RowKeys($0.state)) }
        let state = SQLiteValue.blob(NotificationStateCodec.encode(s))
        let user = keys.user.map(SQLiteValue.text) ?? .null
        let latest = keys.latest.map(SQLiteValue.integer) ?? .null
        try sqlite { () throws(SQLiteError) in
            let id: SQLiteValue
            if let row, let old {
                id = .integer(row.id)
                if old.keys == keys {
                    try w.updateState.run(id, state)
                } else {
                    try w.updateRow.run(id, state, .integer(keys.expires), user, latest)
                }
            } else {
                try w.insertState.run(.blob(n.bytes), .integer(Int64(part)), state, .integer(keys.expires), user, latest)
                id = .integer(connection.lastInsertedRowID)
            }
            let subjectChanged = s.subject != old?.state.subject
            if subjectChanged, let previous = old?.state.subject, previous.user == nil {
                for d in previous.devices { try w.deleteSubjectDevice.run(.integer(Int64(bitPattern: d.value)), id) }
            }
            guard let subject = s.subject else { return }
            if let user = subject.user {
                // Each pair's row outlives every notification that wrote it (see RulesSchema).
                guard subjectChanged || keys.expires > old?.keys.expires ?? .min else { return }
                let expires = keys.expires
                let slack = RulesSchema.deviceUserSlack
                for d in subject.devices {
                    try w.upsertDeviceUser.run(
                        .integer(Int64(bitPattern: d.value)), .text(user), .integer(expires),
                        .integer(expires > Int64.max - slack ? .max : expires + slack))
                }
            } else if subjectChanged {
                for d in subject.devices { try w.insertSubjectDevice.run(.integer(Int64(bitPattern: d.value)), id) }
            }
        }
    }

    /// Forgets partition `part`: its rows, claim and next offset (a re-claim restores it from
    /// the changelog's start). `device_users` rows, of no partition, stay until they expire:
    /// they only lead a `[device]` read to a user's notifications.
    func reset(partition part: Int32) throws(RulesStoreError) {
        _ = try writer("reset partition \(part)")
        try connection.transaction { () throws(RulesStoreError) in
            try sqlite { () throws(SQLiteError) in
                for sql in [
                    "DELETE FROM subject_devices WHERE id IN (SELECT id FROM notifications WHERE part = ?1)",
                    "DELETE FROM notifications WHERE part = ?1", "DELETE FROM claims WHERE part = ?1", "DELETE FROM offsets WHERE part = ?1",
                ] {
                    try connection.prepare(sql).run(.integer(Int64(part)))
                }
            }
        }
    }

    /// Deletes up to `limit` notifications (with their device rows) and up to `limit`
    /// `device_users` rows whose expiry (rounded up to the minute) is at or before `now`, in one
    /// transaction.
    /// - Returns: the rows deleted (notifications plus `device_users` rows).
    func sweep(now: Int64, limit: Int) throws(RulesStoreError) -> Int {
        let w = try writer("sweep")
        return try connection.transaction { () throws(RulesStoreError) -> Int in
            try sqlite { () throws(SQLiteError) -> Int in
                var expired: [(id: SQLiteValue, devices: [DeviceKey])] = []
                try w.expiredStates.bind(.integer(now), .integer(Int64(max(limit, 0))))
                while try w.expiredStates.step() {
                    // A row that does not decode goes too, without its devices (they only lead a read to nothing).
                    let subject = try? w.expiredStates.withBlob(1) { bytes throws(FactCodecError) in try NotificationStateCodec.decode(bytes) }
                        .subject
                    expired.append((.integer(w.expiredStates.int64(0)), subject?.user == nil ? subject?.devices ?? [] : []))
                }
                w.expiredStates.reset()
                for (id, devices) in expired {
                    try w.deleteState.run(id)
                    for d in devices { try w.deleteSubjectDevice.run(.integer(Int64(bitPattern: d.value)), id) }
                }
                try w.deleteExpiredDeviceUsers.run(.integer(now), .integer(Int64(max(limit, 0))))
                return expired.count + connection.changes
            }
        }
    }
}
