import DeviceRegistry
import Foundation
import TestSupport
import Testing

@Suite("Registry store on real SQLite files")
struct RegistryStoreTests {
    static let android = RegisteredDevice(kind: .token, id: "tok-1", platform: "android", app: "consumer", labels: ["lang": "de"])
    static let ios = RegisteredDevice(kind: .fid, id: "fid-1", platform: "ios")

    @Test("applied records are looked up as they were written; counts follow")
    func applyAndLookUp() throws {
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("r.sqlite"))
        try store.apply(
            [
                RegistryUpdate(user: "alice", devices: [Self.android, Self.ios]),
                RegistryUpdate(user: "bob", devices: [RegisteredDevice(kind: .token, id: "tok-b")]),
            ], offsets: [0: 2], topic: "reg")
        #expect(try store.devices(of: "alice") == [Self.android, Self.ios])
        #expect(try store.devices(of: "bob") == [RegisteredDevice(kind: .token, id: "tok-b")])
        #expect(try store.devices(of: "nobody").isEmpty)
        #expect(try !store.contains("nobody"))
        #expect(store.userCount == 2)
        #expect(store.deviceCount == 3)
    }

    @Test("a tombstone deletes the user; an empty list keeps the user with no devices")
    func tombstoneAndEmpty() throws {
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("r.sqlite"))
        try store.apply(
            [RegistryUpdate(user: "alice", devices: [Self.android]), RegistryUpdate(user: "bob", devices: [Self.ios])], offsets: [0: 2], topic: "reg")
        try store.apply(
            [RegistryUpdate(user: "alice", devices: nil), RegistryUpdate(user: "bob", devices: []), RegistryUpdate(user: "carol", devices: nil)],
            offsets: [0: 5], topic: "reg")
        #expect(try !store.contains("alice"))
        #expect(try store.contains("bob"))
        #expect(try store.devices(of: "bob").isEmpty)
        #expect(store.userCount == 1)
        #expect(store.deviceCount == 0)
    }

    @Test("later updates of a user in one batch win, in order")
    func orderWithinBatch() throws {
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("r.sqlite"))
        try store.apply(
            [
                RegistryUpdate(user: "alice", devices: [Self.android]), RegistryUpdate(user: "alice", devices: nil),
                RegistryUpdate(user: "alice", devices: [Self.ios]),
            ], offsets: [0: 3], topic: "reg")
        #expect(try store.devices(of: "alice") == [Self.ios])
        #expect(store.userCount == 1 && store.deviceCount == 1)
    }

    @Test("records, offsets, counts and dead devices survive a reopen")
    func persistsAcrossReopen() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("r.sqlite")
        do {
            let store = try RegistryStore(path: path)
            try store.apply([RegistryUpdate(user: "alice", devices: [Self.android, Self.ios])], offsets: [0: 10, 3: 7], topic: "reg")
            #expect(try store.removeDevice("tok-1", of: "alice"))
        }
        let store = try RegistryStore(path: path)
        #expect(try store.offsets(topic: "reg") == [0: 10, 3: 7])
        #expect(try store.offsets(topic: "other").isEmpty)
        #expect(try store.topics() == ["reg"])
        #expect(try store.devices(of: "alice") == [Self.ios])
        #expect(store.userCount == 1 && store.deviceCount == 1)
        // Still dead after the reopen: a record that lists it does not bring it back.
        try store.apply([RegistryUpdate(user: "alice", devices: [Self.android, Self.ios])], offsets: [0: 11], topic: "reg")
        #expect(try store.devices(of: "alice") == [Self.ios])
    }

    @Test("removing a device: persisted at once, kept out while listed, forgotten once the source drops it")
    func removeDevice() throws {
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("r.sqlite"))
        try store.apply([RegistryUpdate(user: "alice", devices: [Self.android, Self.ios])], offsets: [0: 1], topic: "reg")
        #expect(try store.removeDevice("tok-1", of: "alice"))
        #expect(try !store.removeDevice("tok-1", of: "alice"))
        #expect(try !store.removeDevice("tok-x", of: "nobody"))
        #expect(try store.devices(of: "alice") == [Self.ios])
        #expect(store.deviceCount == 1)
        try store.apply([RegistryUpdate(user: "alice", devices: [Self.ios])], offsets: [0: 2], topic: "reg")
        try store.apply([RegistryUpdate(user: "alice", devices: [Self.android, Self.ios])], offsets: [0: 3], topic: "reg")
        #expect(try store.devices(of: "alice") == [Self.android, Self.ios])
        // A tombstone forgets the user's dead devices too.
        #expect(try store.removeDevice("fid-1", of: "alice"))
        try store.apply([RegistryUpdate(user: "alice", devices: nil)], offsets: [0: 4], topic: "reg")
        try store.apply([RegistryUpdate(user: "alice", devices: [Self.ios])], offsets: [0: 5], topic: "reg")
        #expect(try store.devices(of: "alice") == [Self.ios])
    }

    @Test("lookups from many tasks at once each get their own user's devices")
    func concurrentLookups() async throws {
        let folder = try TemporaryFolder()
        let store = try RegistryStore(path: folder.path("r.sqlite"), readers: 3)
        let updates = (0..<2_000).map { RegistryUpdate(user: "user-\($0)", devices: [RegisteredDevice(kind: .token, id: "tok-\($0)")]) }
        try store.apply(updates, offsets: [0: 2_000], topic: "reg")
        let wrong = try await withThrowingTaskGroup(of: Int.self) { group in
            for t in 0..<8 {
                group.addTask {
                    var wrong = 0
                    for i in stride(from: t, to: 2_000, by: 8) where try store.devices(of: "user-\(i)").map(\.id) != ["tok-\(i)"] {
                        wrong += 1
                    }
                    return wrong
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(wrong == 0)
    }

    @Test("read-only: sees what the writer wrote, refuses to write, needs an existing file")
    func readOnly() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("r.sqlite")
        let writer = try RegistryStore(path: path)
        try writer.apply([RegistryUpdate(user: "alice", devices: [Self.android])], offsets: [1: 4], topic: "reg")
        let reader = try RegistryStore(path: path, readOnly: true)
        #expect(try reader.devices(of: "alice") == [Self.android])
        #expect(try reader.offsets(topic: "reg") == [1: 4])
        #expect(reader.userCount == 1 && reader.deviceCount == 1)
        try writer.apply([RegistryUpdate(user: "bob", devices: [Self.ios])], offsets: [1: 5], topic: "reg")
        #expect(try reader.devices(of: "bob") == [Self.ios])
        #expect(throws: RegistryError.self) { try reader.apply([], offsets: [:], topic: "reg") }
        let missing = #expect(throws: RegistryError.self) { try RegistryStore(path: folder.path("none.sqlite"), readOnly: true) }
        #expect(missing?.code == .io)
    }

    @Test("a file that is not a registry is refused with a reason, never a crash")
    func unusableFiles() throws {
        let folder = try TemporaryFolder()
        let text = folder.path("text.sqlite")
        try Data("these are not the bytes of a database, but long enough to look like a header...".utf8).write(to: URL(fileURLWithPath: text))
        let notDatabase = #expect(throws: RegistryError.self) { try RegistryStore(path: text) }
        #expect(notDatabase?.code == .unusableFile)

        // A registry file of another format version (PRAGMA user_version: bytes 60–63 of the header).
        let path = folder.path("future.sqlite")
        do { _ = try RegistryStore(path: path) }
        try patch(path, at: 60, [0, 0, 0, 99])
        let future = #expect(throws: RegistryError.self) { try RegistryStore(path: path) }
        #expect(future?.code == .unusableFile)
        #expect(future?.message.contains("format 99") == true)

        // Version 0 with tables: a SQLite database of something else.
        try patch(path, at: 60, [0, 0, 0, 0])
        let other = #expect(throws: RegistryError.self) { try RegistryStore(path: path) }
        #expect(other?.code == .unusableFile)

        let noFolder = #expect(throws: RegistryError.self) { try RegistryStore(path: folder.path("missing/dir/r.sqlite")) }
        #expect(noFolder?.code == .io)
    }

    @Test("a damaged file: open or lookup fails with unusableFile, never a crash")
    func damagedFile() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("r.sqlite")
        do {
            let store = try RegistryStore(path: path)
            let updates = (0..<3_000).map {
                RegistryUpdate(user: "user-\($0)", devices: [RegisteredDevice(kind: .token, id: String(repeating: "t", count: 150) + "\($0)")])
            }
            try store.apply(updates, offsets: [0: 3_000], topic: "reg")
        }
        // Checkpointed into the main file on close; overwrite everything after the first page.
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        #expect(size > 100_000)
        try patch(path, at: 8192, [UInt8](repeating: 0xA5, count: size - 8192))
        let failure = #expect(throws: RegistryError.self) {
            let store = try RegistryStore(path: path)
            for i in stride(from: 0, to: 3_000, by: 100) { _ = try store.devices(of: "user-\(i)") }
        }
        #expect(failure?.code == .unusableFile)
    }

    private func patch(_ path: String, at offset: UInt64, _ bytes: [UInt8]) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data(bytes))
        try handle.close()
    }
}
