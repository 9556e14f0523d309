import SQLite

/// The store's one writing connection: applies records and offsets, drops dead devices.
///
/// `@unchecked Sendable`: ``RegistryStore`` keeps it behind a `Mutex` (``Locked``) and uses it
/// only inside that lock, so one thread at a time touches it and its statements.
final class RegistryWriter: @unchecked Sendable {
    let connection: SQLiteConnection
    private let selectDevices: SQLiteStatement
    private let upsertUser: SQLiteStatement
    private let deleteUser: SQLiteStatement
    private let upsertOffset: SQLiteStatement
    private let selectOffsets: SQLiteStatement
    private let insertDead: SQLiteStatement
    private let deleteDead: SQLiteStatement
    private let deleteDeadOfUser: SQLiteStatement
    private let upsertCount: SQLiteStatement
    /// Devices FCM reported dead, by user, until a record no longer lists them (the backend
    /// deleted them) or deletes the user. Usually empty, so applying costs nothing extra.
    private(set) var dead: [String: Set<String>] = [:]
    private(set) var counts: RegistryCounts

    init(path: String, cacheKiB: Int) throws(RegistryError) {
        let c = try sqlite { () throws(SQLiteError) in try SQLiteConnection(path: path, readOnly: false) }
        try RegistrySchema.configure(c, cacheKiB: cacheKiB)
        try RegistrySchema.prepare(writer: c)
        connection = c
        do throws(SQLiteError) {
            selectDevices = try c.prepare(RegistrySchema.selectDevices)
            upsertUser = try c.prepare(
                "INSERT INTO users (user, devices) VALUES (?1, ?2) ON CONFLICT (user) DO UPDATE SET devices = excluded.devices")
            deleteUser = try c.prepare("DELETE FROM users WHERE user = ?1")
            upsertOffset = try c.prepare(
                "INSERT INTO offsets (topic, partition, next) VALUES (?1, ?2, ?3) ON CONFLICT (topic, partition) DO UPDATE SET next = excluded.next")
            selectOffsets = try c.prepare("SELECT topic, partition, next FROM offsets")
            insertDead = try c.prepare("INSERT OR IGNORE INTO dead_devices (user, id) VALUES (?1, ?2)")
            deleteDead = try c.prepare("DELETE FROM dead_devices WHERE user = ?1 AND id = ?2")
            deleteDeadOfUser = try c.prepare("DELETE FROM dead_devices WHERE user = ?1")
            upsertCount = try c.prepare("INSERT INTO counts (name, value) VALUES (?1, ?2) ON CONFLICT (name) DO UPDATE SET value = excluded.value")
        } catch { throw RegistryError(error) }
        counts = try RegistryCounts.read(c)
        dead = try sqlite { () throws(SQLiteError) in
            let rows = try c.prepare("SELECT user, id FROM dead_devices")
            defer { rows.reset() }
            var dead: [String: Set<String>] = [:]
            while try rows.step() { dead[rows.text(0), default: []].insert(rows.text(1)) }
            return dead
        }
    }

    /// Every stored offset: topic → partition → next offset to read.
    func offsets() throws(RegistryError) -> [String: [Int32: Int64]] {
        defer { selectOffsets.reset() }
        return try sqlite { () throws(SQLiteError) in
            var result: [String: [Int32: Int64]] = [:]
            while try selectOffsets.step() {
                result[selectOffsets.text(0), default: [:]][Int32(truncatingIfNeeded: selectOffsets.int64(1))] = selectOffsets.int64(2)
            }
            return result
        }
    }

    /// Applies `updates` in order and stores `offsets`, all in one transaction.
    func apply(_ updates: [RegistryUpdate], offsets: [Int32: Int64], topic: String) throws(RegistryError) {
        var counts = self.counts
        var dead = self.dead
        // In key order (stable, so a user's updates keep theirs): neighbouring keys share
        // B-tree pages, so a batch visits each page once instead of at random.
        let ordered = updates.enumerated().sorted { ($0.element.user, $0.offset) < ($1.element.user, $1.offset) }.map(\.element)
        try connection.transaction { () throws(RegistryError) in
            for update in ordered {
                let before = try storedCount(of: update.user)
                guard var devices = update.devices else {
                    if let before {
                        try sqlite { () throws(SQLiteError) in try deleteUser.run(.text(update.user)) }
                        counts.users -= 1
                        counts.devices -= before
                    }
                    if dead.removeValue(forKey: update.user) != nil {
                        try sqlite { () throws(SQLiteError) in try deleteDeadOfUser.run(.text(update.user)) }
                    }
                    continue
                }
                if let gone = dead[update.user] {
                    devices = try dropDead(gone, from: devices, of: update.user, dead: &dead)
                }
                try sqlite { () throws(SQLiteError) in
                    try upsertUser.run(.text(update.user), .blob(DeviceListCodec.encode(devices, preferences: update.preferences)))
                }
                counts.users += before == nil ? 1 : 0
                counts.devices += devices.count - (before ?? 0)
            }
            try sqlite { () throws(SQLiteError) in
                for (partition, next) in offsets { try upsertOffset.run(.text(topic), .integer(Int64(partition)), .integer(next)) }
            }
            try counts.write(with: upsertCount)
        }
        self.counts = counts
        self.dead = dead
    }

    /// Devices of a record that FCM reported dead are left out while the record still lists
    /// them; a dead device the record no longer lists has been deleted at the source, and is
    /// forgotten.
    private func dropDead(
        _ gone: Set<String>, from devices: [RegisteredDevice], of user: String, dead: inout [String: Set<String>]
    ) throws(RegistryError) -> [RegisteredDevice] {
        let listed = Set(devices.map(\.id))
        for id in gone where !listed.contains(id) {
            try sqlite { () throws(SQLiteError) in try deleteDead.run(.text(user), .text(id)) }
            dead[user]?.remove(id)
        }
        if dead[user]?.isEmpty == true { dead[user] = nil }
        return devices.filter { !gone.contains($0.id) }
    }

    /// Makes sure every user's preferences are stored: a file filled before preferences
    /// existed has its offsets forgotten, so the follower reads the topic again from the start
    /// (its rows stay, and serve lookups meanwhile). True when it did so.
    func rereadForPreferences() throws(RegistryError) -> Bool {
        let hasMark = try sqlite { () throws(SQLiteError) -> Bool in
            let marked = try connection.prepare("SELECT 1 FROM counts WHERE name = '\(RegistrySchema.preferencesMark)'")
            defer { marked.reset() }
            return try marked.step()
        }
        guard !hasMark else { return false }
        let hadOffsets = try !offsets().isEmpty
        try connection.transaction { () throws(RegistryError) in
            try sqlite { () throws(SQLiteError) in
                try connection.execute("DELETE FROM offsets")
                try upsertCount.run(.text(RegistrySchema.preferencesMark), .integer(1))
            }
        }
        return hadOffsets
    }

    /// Drops one device of a user at once and remembers it as dead.
    /// - Returns: whether the user's stored devices listed it.
    func removeDevice(_ id: String, of user: String) throws(RegistryError) -> Bool {
        var counts = self.counts
        let removed = try connection.transaction { () throws(RegistryError) -> Bool in
            try sqlite { () throws(SQLiteError) in try insertDead.run(.text(user), .text(id)) }
            guard let stored = try storedUser(user) else { return false }
            let devices = stored.devices
            let kept = devices.filter { $0.id != id }
            guard kept.count < devices.count else { return false }
            try sqlite { () throws(SQLiteError) in
                try upsertUser.run(.text(user), .blob(DeviceListCodec.encode(kept, preferences: stored.preferences)))
            }
            counts.devices -= devices.count - kept.count
            try counts.write(with: upsertCount)
            return true
        }
        self.counts = counts
        dead[user, default: []].insert(id)
        return removed
    }

    /// Removes a push-to-start token FCM refused from `user`'s devices; the devices stay. True
    /// if it was there. A later record that still lists it brings it back (the backend deletes
    /// it at the source from the invalidation record).
    func removePushToStart(_ token: String, of user: String) throws(RegistryError) -> Bool {
        try connection.transaction { () throws(RegistryError) -> Bool in
            guard var stored = try storedUser(user) else { return false }
            var removed = false
            for i in stored.devices.indices where stored.devices[i].pushToStart.values.contains(token) {
                stored.devices[i].pushToStart = stored.devices[i].pushToStart.filter { $0.value != token }
                removed = true
            }
            if removed {
                try sqlite { () throws(SQLiteError) in
                    try upsertUser.run(.text(user), .blob(DeviceListCodec.encode(stored.devices, preferences: stored.preferences)))
                }
            }
            return removed
        }
    }

    private func storedCount(of user: String) throws(RegistryError) -> Int? {
        try selectDevices.devicesRow(of: user) { bytes throws(RegistryError) in try DeviceListCodec.count(bytes) }
    }

    private func storedUser(_ user: String) throws(RegistryError) -> RegisteredUser? {
        try selectDevices.devicesRow(of: user) { bytes throws(RegistryError) in try DeviceListCodec.decodeUser(bytes) }
    }
}

/// How many users and devices the store holds, kept in the `counts` table.
struct RegistryCounts: Sendable, Equatable {
    var users = 0
    var devices = 0

    static func read(_ c: SQLiteConnection) throws(RegistryError) -> RegistryCounts {
        try sqlite { () throws(SQLiteError) in
            let s = try c.prepare("SELECT name, value FROM counts")
            defer { s.reset() }
            var counts = RegistryCounts()
            while try s.step() {
                switch s.text(0) {
                case "users": counts.users = Int(s.int64(1))
                case "devices": counts.devices = Int(s.int64(1))
                default: break
                }
            }
            return counts
        }
    }

    func write(with upsert: SQLiteStatement) throws(RegistryError) {
        try sqlite { () throws(SQLiteError) in
            try upsert.run(.text("users"), .integer(Int64(users)))
            try upsert.run(.text("devices"), .integer(Int64(devices)))
        }
    }
}
