import SQLite

/// A reading connection with its lookup prepared. ``RegistryStore`` keeps several, each behind
/// its own `Mutex`, so lookups from many tasks run side by side (WAL readers do not block each
/// other or the writer).
///
/// `@unchecked Sendable`: used only inside its ``Locked`` mutex, one thread at a time.
final class RegistryReader: @unchecked Sendable {
    let connection: SQLiteConnection
    private let selectDevices: SQLiteStatement

    init(path: String, cacheKiB: Int, readOnly: Bool) throws(RegistryError) {
        let c = try sqlite { () throws(SQLiteError) in try SQLiteConnection(path: path, readOnly: readOnly) }
        try RegistrySchema.configure(c, cacheKiB: cacheKiB)
        if readOnly { try RegistrySchema.check(reader: c) }
        connection = c
        selectDevices = try sqlite { () throws(SQLiteError) in try c.prepare(RegistrySchema.selectDevices) }
    }

    /// The user's devices; nil for a user the registry does not know.
    func devices(of user: String) throws(RegistryError) -> [RegisteredDevice]? {
        try self.user(user)?.devices
    }

    /// The user's devices and preferences; nil for a user the registry does not know.
    func user(_ user: String) throws(RegistryError) -> RegisteredUser? {
        try selectDevices.devicesRow(of: user) { bytes throws(RegistryError) in try DeviceListCodec.decodeUser(bytes) }
    }

    func counts() throws(RegistryError) -> RegistryCounts {
        try RegistryCounts.read(connection)
    }

    func offsets() throws(RegistryError) -> [String: [Int32: Int64]] {
        try sqlite { () throws(SQLiteError) in
            let s = try connection.prepare("SELECT topic, partition, next FROM offsets")
            defer { s.reset() }
            var result: [String: [Int32: Int64]] = [:]
            while try s.step() { result[s.text(0), default: [:]][Int32(truncatingIfNeeded: s.int64(1))] = s.int64(2) }
            return result
        }
    }
}
