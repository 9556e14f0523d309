import Foundation
import Synchronization

/// The device registry on local disk: one SQLite file, which is also the snapshot a restarted
/// worker starts from (docs/registry.md says why SQLite, and what it costs).
///
/// Lookups (``devices(of:)``) run on a small pool of reading connections, so many tasks look up
/// at once; writes (``apply(_:offsets:topic:)``, ``removeDevice(_:of:)``) go through one writing
/// connection. Memory stays bounded: each connection's page cache is capped, and nothing is
/// memory-mapped.
///
/// `Sendable`: every connection is behind its own `Mutex`; the counts are in the writer's.
public final class RegistryStore: Sendable {
    /// The SQLite file.
    public let path: String
    /// Opened with `readOnly`: ``apply(_:offsets:topic:)`` and ``removeDevice(_:of:)`` throw.
    public let isReadOnly: Bool
    private let writer: Locked<RegistryWriter>?
    private let readers: [Locked<RegistryReader>]
    private let nextReader = Atomic<UInt>(0)

    /// Opens the registry file at `path`, creating it (and its tables) when it does not exist.
    ///
    /// - Parameters:
    ///   - cacheMegabytes: SQLite's page cache for all connections together: half for the writer
    ///     (batched applies), half shared by the readers. Default 64 MB. The file's pages beyond it are read
    ///     through the kernel's page cache, which is not the process's resident memory.
    ///   - readers: reading connections, the lookups that can run at the same time.
    ///   - readOnly: open an existing file without writing to it (`pushbridge registry` beside a
    ///     running worker); fails when there is no registry file at `path`.
    /// - Throws: ``RegistryError`` `.unusableFile` for a file that is not a registry (or is
    ///   damaged, or of another format version), `.io` when it cannot be opened or created.
    public init(path: String, cacheMegabytes: Int = 64, readers: Int = 4, readOnly: Bool = false) throws(RegistryError) {
        self.path = path
        isReadOnly = readOnly
        let readerCount = max(readers, 1)
        let cacheKiB = max(cacheMegabytes, 1) * 1024
        if readOnly {
            guard FileManager.default.fileExists(atPath: path) else {
                throw RegistryError(code: .io, message: "\(path): no registry file there")
            }
            writer = nil
        } else {
            // The writer first: it creates the file and its tables.
            writer = Locked(try RegistryWriter(path: path, cacheKiB: cacheKiB / 2))
        }
        var pool: [Locked<RegistryReader>] = []
        for _ in 0..<readerCount {
            pool.append(Locked(try RegistryReader(path: path, cacheKiB: cacheKiB / 2 / readerCount, readOnly: readOnly)))
        }
        self.readers = pool
    }

    /// The devices of `user`; empty for a user the registry does not know (or who has none).
    ///
    /// The hot path: one indexed read on a free reading connection (docs/benchmarks.md).
    /// - Throws: ``RegistryError`` when the file cannot be read (damaged, I/O error).
    public func devices(of user: String) throws(RegistryError) -> [RegisteredDevice] {
        try withReader { reader throws(RegistryError) in try reader.devices(of: user) } ?? []
    }

    /// The devices and preferences of `user`; nil for a user the registry does not know. The same
    /// one indexed read as ``devices(of:)``.
    public func user(_ user: String) throws(RegistryError) -> RegisteredUser? {
        try withReader { reader throws(RegistryError) in try reader.user(user) }
    }

    /// Whether the registry has a record for `user` (a user with no devices counts).
    public func contains(_ user: String) throws(RegistryError) -> Bool {
        try withReader { reader throws(RegistryError) in try reader.devices(of: user) } != nil
    }

    /// Drops the device `id` of `user` at once (FCM reported it dead) and keeps it out of later
    /// records of the user until one no longer lists it (the backend deleted it after reading the
    /// invalidation topic) or deletes the user. Persisted before it returns.
    /// - Returns: whether the user's stored devices listed it.
    @discardableResult
    public func removeDevice(_ id: String, of user: String) throws(RegistryError) -> Bool {
        try withWriter { w throws(RegistryError) in try w.removeDevice(id, of: user) }
    }

    /// Removes a dead push-to-start token from `user`'s devices (``RegistryWriter/removePushToStart(_:of:)``).
    @discardableResult
    public func removePushToStart(_ token: String, of user: String) throws(RegistryError) -> Bool {
        try withWriter { w throws(RegistryError) in try w.removePushToStart(token, of: user) }
    }

    /// For a worker whose mappings read preferences (docs/rules.md): a file filled by a
    /// pushbridge before preferences existed is read again from the topic's start, since its rows
    /// lack them. True when the offsets were forgotten for that.
    public func rereadForPreferences() throws(RegistryError) -> Bool {
        try withWriter { w throws(RegistryError) in try w.rereadForPreferences() }
    }

    /// Applies `updates` in order, and stores `offsets` (partition → next offset to read of
    /// `topic`) in the same transaction: the file never holds records without their offsets,
    /// or offsets past records it lacks.
    public func apply(_ updates: [RegistryUpdate], offsets: [Int32: Int64], topic: String) throws(RegistryError) {
        try withWriter { w throws(RegistryError) in try w.apply(updates, offsets: offsets, topic: topic) }
    }

    /// The next offset to read per partition of `topic`; empty when nothing was stored.
    public func offsets(topic: String) throws(RegistryError) -> [Int32: Int64] {
        try allOffsets()[topic] ?? [:]
    }

    /// The topics whose offsets the file holds (one, unless something is wrong).
    public func topics() throws(RegistryError) -> [String] {
        try allOffsets().keys.sorted()
    }

    /// How many users the registry holds.
    public var userCount: Int { (try? counts().users) ?? 0 }
    /// How many devices the registry holds, over all users.
    public var deviceCount: Int { (try? counts().devices) ?? 0 }

    private func counts() throws(RegistryError) -> RegistryCounts {
        if let writer { return writer.mutex.withLock { $0.counts } }
        return try withReader { reader throws(RegistryError) in try reader.counts() }
    }

    private func allOffsets() throws(RegistryError) -> [String: [Int32: Int64]] {
        if let writer { return try writer.mutex.withLock { w throws(RegistryError) in try w.offsets() } }
        return try withReader { reader throws(RegistryError) in try reader.offsets() }
    }

    private func withWriter<T>(_ body: (RegistryWriter) throws(RegistryError) -> T) throws(RegistryError) -> T {
        guard let writer else { throw RegistryError(code: .io, message: "\(path) is open read-only") }
        return try writer.mutex.withLock { w throws(RegistryError) in try body(w) }
    }

    /// Runs `body` on the first free reader, starting from a rotating one; waits for that one
    /// when all are busy.
    private func withReader<T>(_ body: (RegistryReader) throws(RegistryError) -> T) throws(RegistryError) -> T {
        let start = nextReader.wrappingAdd(1, ordering: .relaxed).oldValue
        for i in 0..<readers.count {
            let slot = readers[Int((start &+ UInt(i)) % UInt(readers.count))]
            if let result = try slot.mutex.withLockIfAvailable({ r throws(RegistryError) in try body(r) }) { return result }
        }
        return try readers[Int(start % UInt(readers.count))].mutex.withLock { r throws(RegistryError) in try body(r) }
    }
}

/// A `Mutex` in a class, so that several can sit in an array (a `Mutex` cannot be copied).
final class Locked<Value: Sendable>: Sendable {
    let mutex: Mutex<Value>

    init(_ value: Value) {
        mutex = Mutex(value)
    }
}
