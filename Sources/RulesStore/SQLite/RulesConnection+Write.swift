import Rules
import SQLite

/// The statements that write, prepared once (nil on a read-only connection).
struct RulesWrites {
    let upsertState: SQLiteStatement
    let deleteState: SQLiteStatement
    let deleteSubjectDevices: SQLiteStatement
    let insertSubjectDevice: SQLiteStatement
    let upsertPush: SQLiteStatement
    let upsertClaim: SQLiteStatement
    let upsertOffset: SQLiteStatement
    let expiredStates: SQLiteStatement
    let deleteExpiredPushes: SQLiteStatement

    init(_ c: SQLiteConnection) throws(SQLiteError) {
        upsertState = try c.prepare(
            """
            INSERT INTO notifications (n, part, state, user, category, mapping, latest, expires) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            ON CONFLICT (n, part) DO UPDATE SET state = excluded.state, user = excluded.user, category = excluded.category,
            mapping = excluded.mapping, latest = excluded.latest, expires = excluded.expires
            """)
        deleteState = try c.prepare("DELETE FROM notifications WHERE n = ?1 AND part = ?2")
        deleteSubjectDevices = try c.prepare("DELETE FROM subject_devices WHERE n = ?1 AND part = ?2")
        insertSubjectDevice = try c.prepare("INSERT OR IGNORE INTO subject_devices (n, part, device) VALUES (?1, ?2, ?3)")
        upsertPush = try c.prepare(
            """
            INSERT INTO device_pushes (d, part, at, expires) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (d, part) DO UPDATE SET at = max(at, excluded.at), expires = max(expires, excluded.expires)
            """)
        upsertClaim = try c.prepare(
            """
            INSERT INTO claims (part, offset, owner, at, partition_count) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (part) DO UPDATE SET offset = excluded.offset, owner = excluded.owner, at = excluded.at,
            partition_count = excluded.partition_count WHERE excluded.offset > claims.offset
            """)
        upsertOffset = try c.prepare("INSERT INTO offsets (part, next) VALUES (?1, ?2) ON CONFLICT (part) DO UPDATE SET next = excluded.next")
        expiredStates = try c.prepare("SELECT n, part FROM notifications WHERE expires <= ?1 LIMIT ?2")
        deleteExpiredPushes = try c.prepare(
            "DELETE FROM device_pushes WHERE (d, part) IN (SELECT d, part FROM device_pushes WHERE expires <= ?1 LIMIT ?2)")
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
    /// - Returns: the facts applied.
    func apply(partition part: Int32, facts: [(offset: Int64, fact: Fact)]) throws(RulesStoreError) -> [Fact] {
        let w = try writer("apply facts to partition \(part)")
        for (a, b) in zip(facts, facts.dropFirst()) where b.offset <= a.offset {
            throw RulesStoreError(code: .outOfOrder, message: "\(path): partition \(part): offset \(b.offset) after \(a.offset)")
        }
        let next = try nextOffset(part) ?? .min
        let fresh = facts.filter { $0.offset >= next }
        guard let last = fresh.last else { return [] }
        var byNotification: [NotificationID: [NotificationFact]] = [:]
        var pushes: [DevicePushID: (at: Int64, expires: Int64)] = [:]
        var claim: (offset: Int64, claim: Claim)?
        for (offset, fact) in fresh {
            switch fact {
            case .claim(let c): claim = (offset, c)
            case .notification(let f):
                byNotification[f.notification, default: []].append(f)
                for d in f.devices {
                    let old = pushes[d] ?? (.min, .min)
                    pushes[d] = (max(old.at, f.at), max(old.expires, f.expires))
                }
            }
        }
        try connection.transaction { () throws(RulesStoreError) in
            // In key order: neighbouring keys share B-tree pages.
            for (n, facts) in byNotification.sorted(by: { $0.key < $1.key }) {
                let old = try state(of: n, partition: part)
                var new = old ?? NotificationState()
                for f in facts { new.apply(f) }
                guard new != old else { continue }
                try write(new, of: n, partition: part, subjectChanged: new.subject?.devices != old?.subject?.devices, w)
            }
            try sqlite { () throws(SQLiteError) in
                for (d, p) in pushes.sorted(by: { $0.key < $1.key }) {
                    try w.upsertPush.run(.integer(Int64(bitPattern: d.value)), .integer(Int64(part)), .integer(p.at), .integer(p.expires))
                }
                if let (offset, c) = claim {
                    try w.upsertClaim.run(.integer(Int64(part)), .integer(offset), .text(c.owner), .integer(c.at), .integer(Int64(c.partitionCount)))
                }
                try w.upsertOffset.run(.integer(Int64(part)), .integer(last.offset &+ 1))
            }
        }
        return fresh.map(\.fact)
    }

    private func write(
        _ s: NotificationState, of n: NotificationID, partition part: Int32, subjectChanged: Bool, _ w: RulesWrites
    ) throws(RulesStoreError) {
        let latest = s.attempts.values.filter { $0.status != .released }.map(\.at).max()
        let key = SQLiteValue.blob(n.bytes)
        func text(_ value: String?) -> SQLiteValue { value.map(SQLiteValue.text) ?? .null }
        try sqlite { () throws(SQLiteError) in
            try w.upsertState.run(
                key, .integer(Int64(part)), .blob(NotificationStateCodec.encode(s)), text(s.subject?.user), text(s.subject?.category),
                text(s.subject?.mapping), latest.map(SQLiteValue.integer) ?? .null, .integer(s.expires))
            guard subjectChanged else { return }
            try w.deleteSubjectDevices.run(key, .integer(Int64(part)))
            for d in s.subject?.devices ?? [] { try w.insertSubjectDevice.run(key, .integer(Int64(part)), .integer(Int64(bitPattern: d.value))) }
        }
    }

    /// Forgets partition `part`: its rows, claim and next offset (a re-claim restores it from
    /// the changelog's start).
    func reset(partition part: Int32) throws(RulesStoreError) {
        _ = try writer("reset partition \(part)")
        try connection.transaction { () throws(RulesStoreError) in
            try sqlite { () throws(SQLiteError) in
                for table in ["notifications", "subject_devices", "device_pushes", "claims", "offsets"] {
                    let s = try connection.prepare("DELETE FROM \(table) WHERE part = ?1")
                    try s.run(.integer(Int64(part)))
                }
            }
        }
    }

    /// Deletes up to `limit` notifications (with their device keys) and up to `limit`
    /// acknowledged device pushes whose expiry is at or before `now`, in one transaction.
    /// - Returns: the rows deleted (notifications plus device pushes).
    func sweep(now: Int64, limit: Int) throws(RulesStoreError) -> Int {
        let w = try writer("sweep")
        return try connection.transaction { () throws(RulesStoreError) -> Int in
            try sqlite { () throws(SQLiteError) -> Int in
                var expired: [(SQLiteValue, SQLiteValue)] = []
                try w.expiredStates.bind(.integer(now), .integer(Int64(max(limit, 0))))
                while try w.expiredStates.step() {
                    expired.append((.blob(w.expiredStates.withBlob(0) { Array($0) }), .integer(w.expiredStates.int64(1))))
                }
                w.expiredStates.reset()
                for (n, part) in expired {
                    try w.deleteState.run(n, part)
                    try w.deleteSubjectDevices.run(n, part)
                }
                try w.deleteExpiredPushes.run(.integer(now), .integer(Int64(max(limit, 0))))
                return expired.count + connection.changes
            }
        }
    }
}
