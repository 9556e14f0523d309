import Foundation
import Rules
import RulesStore
import SQLite
import TestSupport
import Testing

@Suite("The rules store on real SQLite files")
struct RulesStoreTests {
    static let policy = RulesPolicy(sendLimit: 10)
    static let t: Int64 = 1_800_000_000_000
    static let subject = CapSubject(user: "u", category: "social", mapping: "chat", devices: [DeviceKey(target: "fid:a")])
    static let byUser = CapKey(user: .some("u"), category: nil, mapping: nil, device: nil)

    static func n(_ id: String) -> NotificationID { NotificationID(eventID: id, mapping: "chat", subject: "u") }

    static func reserved(_ id: String, at: Int64, attempt: UInt32 = 1, expires: Int64? = nil) -> NotificationFact {
        NotificationFact(
            notification: n(id), status: .reserved, attempt: attempt, at: at, expires: expires ?? at + 1_000, owner: "w", subject: subject)
    }

    static func sent(_ id: String, at: Int64, attempt: UInt32 = 1, expires: Int64? = nil) -> NotificationFact {
        NotificationFact(
            notification: n(id), status: .sent, attempt: attempt, at: at, expires: expires ?? at + 1_000, owner: "w",
            devices: [DevicePushID(notification: n(id), target: "fid:a")])
    }

    static func log(_ facts: [NotificationFact], from offset: Int64 = 0) -> [(offset: Int64, fact: Fact)] {
        facts.enumerated().map { (offset + Int64($0.offset), .notification($0.element)) }
    }

    /// When FCM acknowledged `id`'s push to fid:a, as dedup reads it (from the notification's state).
    static func acknowledged(_ store: RulesStore, _ id: String) throws -> Int64? {
        try store.state(of: n(id))?.acknowledged(DevicePushID(notification: n(id), target: "fid:a"))
    }

    static func counted(_ store: RulesStore, since: Int64) throws -> Set<NotificationID> {
        Set(try store.notifications(of: byUser, countingAfter: since, policy: policy).map(\.0))
    }

    @Test("state, offsets and claims survive closing and opening the file")
    func reopen() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("rules.sqlite")
        let claim = Claim(at: Self.t, owner: "w-1:3:ab", partitionCount: 12)
        do {
            let store = try RulesStore(path: path)
            #expect(try store.nextOffset(partition: 4) == nil)
            try store.apply(
                partition: 4, facts: [(10, .claim(claim))] + Self.log([Self.reserved("a", at: Self.t), Self.sent("a", at: Self.t + 5)], from: 11))
        }
        let store = try RulesStore(path: path)
        #expect(try store.nextOffset(partition: 4) == 13)
        #expect(try store.claim(partition: 4) == StoredClaim(offset: 10, claim: claim))
        #expect(try store.state(of: Self.n("a"))?.status == .sent)
        #expect(try Self.acknowledged(store, "a") == Self.t + 5)
        #expect(try Self.counted(store, since: Self.t) == [Self.n("a")])
        // A claim at a later offset is the latest; the earlier one read again is below the offset.
        try store.apply(partition: 4, facts: [(13, .claim(Claim(at: 1, owner: "w-2:4:cd", partitionCount: 12)))])
        try store.apply(partition: 4, facts: [(10, .claim(claim))])
        #expect(try store.claim(partition: 4)?.claim.owner == "w-2:4:cd" && store.claim(partition: 4)?.offset == 13)
    }

    @Test("facts below the stored offset are skipped; offsets that do not increase are refused")
    func offsets() throws {
        let folder = try TemporaryFolder()
        let store = try RulesStore(path: folder.path("rules.sqlite"))
        try store.apply(partition: 0, facts: Self.log([Self.reserved("a", at: Self.t)], from: 5))
        try store.apply(partition: 0, facts: Self.log([Self.reserved("b", at: Self.t)], from: 5))
        #expect(try store.state(of: Self.n("b")) == nil, "offset 5 was applied already")
        #expect(try store.nextOffset(partition: 0) == 6)
        let error = #expect(throws: RulesStoreError.self) {
            try store.apply(
                partition: 0, facts: [(8, .notification(Self.reserved("c", at: Self.t))), (7, .notification(Self.reserved("d", at: Self.t)))])
        }
        #expect(error?.code == .outOfOrder && error?.message.contains("partition 0: offset 7 after 8") == true)
        #expect(try store.nextOffset(partition: 0) == 6)
    }

    @Test("a batch that fails midway leaves the file at the previous offset with the previous state")
    func atomicity() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("rules.sqlite")
        let store = try RulesStore(path: path)
        // The store merges a batch in key order: the last of three is damaged, the other two come first.
        let ids = ["a", "b", "c"].sorted { Self.n($0) < Self.n($1) }
        let (a, b, z) = (ids[0], ids[1], ids[2])
        try store.apply(partition: 1, facts: Self.log([Self.reserved(a, at: Self.t), Self.reserved(z, at: Self.t)]))
        // Damage z's row behind the store's back.
        let raw = try SQLiteConnection(path: path, readOnly: false)
        try raw.prepare("UPDATE notifications SET state = x'01ff' WHERE n = ?1").run(.blob(Self.n(z).bytes))
        let batch = [Self.sent(a, at: Self.t + 1), Self.reserved(b, at: Self.t + 2), Self.sent(z, at: Self.t + 3)]
        let error = #expect(throws: RulesStoreError.self) { try store.apply(partition: 1, facts: Self.log(batch, from: 2)) }
        #expect(error?.code == .damagedRow)
        #expect(error?.message.contains("partition 1, notification \(Self.n(z))") == true, "says where: \(error?.message ?? "")")
        #expect(try store.nextOffset(partition: 1) == 2)
        #expect(try store.state(of: Self.n(a))?.status == .reserved, "a's sent fact was rolled back")
        #expect(try store.state(of: Self.n(b)) == nil)
        #expect(try Self.acknowledged(store, a) == nil)
        #expect(throws: RulesStoreError.self) { try store.state(of: Self.n(z)) }
    }

    @Test("reset forgets a partition's rows, claim, offset and pending facts, and no other partition's")
    func reset() throws {
        let folder = try TemporaryFolder()
        let store = try RulesStore(path: folder.path("rules.sqlite"))
        let a = Self.log([Self.reserved("a", at: Self.t), Self.sent("a", at: Self.t)], from: 1)
        try store.apply(partition: 0, facts: [(0, .claim(Claim(at: 1, owner: "x", partitionCount: 2)))] + a)
        try store.apply(partition: 1, facts: Self.log([Self.reserved("b", at: Self.t), Self.sent("b", at: Self.t)]))
        try store.addPending(Self.reserved("c", at: Self.t), partition: 0, offset: 3, subjects: [])
        try store.addPending(Self.reserved("d", at: Self.t), partition: 1, offset: 2, subjects: [])
        #expect(try Self.counted(store, since: Self.t - 1) == [Self.n("a"), Self.n("b"), Self.n("c"), Self.n("d")])
        try store.reset(partition: 0)
        #expect(try store.nextOffset(partition: 0) == nil && store.claim(partition: 0) == nil)
        #expect(try store.state(of: Self.n("a")) == nil && store.state(of: Self.n("c")) == nil && store.pendingCount == 1)
        #expect(try Self.acknowledged(store, "a") == nil)
        #expect(try Self.acknowledged(store, "b") == Self.t)
        #expect(try Self.counted(store, since: Self.t - 1) == [Self.n("b"), Self.n("d")])
        #expect(try store.nextOffset(partition: 1) == 2)
        // Restored from the start, it answers as before.
        try store.apply(partition: 0, facts: a)
        #expect(try Self.counted(store, since: Self.t - 1) == [Self.n("a"), Self.n("b"), Self.n("d")])
    }

    @Test("the sweep deletes rows whose expiry passed, with their device rows, in batches of at most its limit")
    func sweep() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("rules.sqlite")
        let store = try RulesStore(path: path)
        // Expiries are kept rounded up to the minute (Self.t is on one).
        let ids = (0..<5).map { ("e\($0)", Self.t + 100) } + [("late", Self.t + 60_100)]
        // A token target's notification: no user, its device in a row of its own.
        let token = NotificationFact(
            notification: Self.n("token"), status: .reserved, attempt: 1, at: Self.t, expires: Self.t + 100, owner: "w",
            subject: CapSubject(user: nil, category: nil, mapping: "chat", devices: [DeviceKey(target: "fid:t")]))
        try store.apply(partition: 0, facts: Self.log(ids.map { Self.reserved($0.0, at: Self.t, expires: $0.1) } + [token]))
        try store.apply(partition: 0, facts: Self.log(ids.map { Self.sent($0.0, at: Self.t, expires: $0.1) }, from: 7))
        let raw = try SQLiteConnection(path: path, readOnly: true)
        func rows(_ table: String) throws -> Int64 {
            let s = try raw.prepare("SELECT count(*) FROM \(table)")
            defer { s.reset() }
            return try s.step() ? s.int64(0) : -1
        }
        #expect(try rows("subject_devices") == 1 && rows("device_users") == 1, "fid:t's row; one for fid:a and u")
        #expect(try store.sweep(now: Self.t + 59_999, limit: 100) == 0)
        #expect(try store.sweep(now: Self.t + 60_000, limit: 4) == 4)
        #expect(try store.sweep(now: Self.t + 60_000, limit: 4) == 2)
        #expect(try store.sweep(now: Self.t + 60_000, limit: 4) == 0)
        #expect(try rows("subject_devices") == 0, "went with its notification")
        #expect(try store.state(of: Self.n("e0")) == nil && store.state(of: Self.n("late")) != nil)
        #expect(try Self.acknowledged(store, "e0") == nil)
        #expect(try Self.acknowledged(store, "late") == Self.t)
        let byDevice = CapKey(user: nil, category: nil, mapping: nil, device: DeviceKey(target: "fid:a"))
        #expect(try store.notifications(of: byDevice, countingAfter: Self.t - 1, policy: Self.policy).map(\.0) == [Self.n("late")])
        // The (device, user) row outlives its notifications, then goes too.
        #expect(try store.sweep(now: .max, limit: 10) == 2)
        #expect(try rows("device_users") == 0 && rows("notifications") == 0)
    }

    @Test("the WAL is copied into the file as the writes go (checkpoints on a connection of their own), not only at close")
    func checkpoints() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("rules.sqlite")
        let store = try RulesStore(path: path, walMegabytes: 1)
        func size(_ file: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int) ?? 0 }
        var largestWAL = 0
        for batch in 0..<40 {
            let facts = (0..<250).map { i in
                NotificationFact(
                    notification: NotificationID(high: UInt64(batch), low: UInt64(i)), status: .reserved, attempt: 1, at: Self.t,
                    expires: Self.t + 1_000,
                    owner: "w", subject: CapSubject(user: "user-\(i * 7_919 % 1_000)", category: nil, mapping: "chat"))
            }
            try store.apply(partition: 0, facts: Self.log(facts, from: Int64(batch * 250)))
            largestWAL = max(largestWAL, size(path + "-wal"))
        }
        #expect(size(path) > 1 << 20, "pages were copied into the file while it was open: \(size(path)) bytes")
        #expect(largestWAL < 3 << 20, "the WAL stayed near its 1 MB: \(largestWAL) bytes")
        #expect(
            try store.notifications(
                of: CapKey(user: .some("user-0"), category: nil, mapping: nil, device: nil), countingAfter: .min, policy: Self.policy
            ).count == 40)
    }

    @Test("a file of another format (format 1, before the write-path rework) is refused with what to do")
    func oldFormat() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("rules.sqlite")
        try SQLiteConnection(path: path, readOnly: false).execute(
            "PRAGMA application_id = \(0x5042_5253); PRAGMA user_version = 1; CREATE TABLE notifications (n BLOB)")
        for readOnly in [false, true] {
            let error = #expect(throws: RulesStoreError.self) { try RulesStore(path: path, readOnly: readOnly) }
            #expect(error?.code == .unusableFile)
            #expect(error?.message.contains("has rules store format 1") == true && error?.message.contains("restore from the changelog") == true)
        }
    }

    @Test("the overlay: pending facts count in every read until the tail applies them")
    func overlay() throws {
        let folder = try TemporaryFolder()
        let store = try RulesStore(path: folder.path("rules.sqlite"))
        try store.apply(partition: 0, facts: Self.log([Self.reserved("a", at: Self.t)]))
        let pendingSent = Self.sent("a", at: Self.t + 3)
        try store.addPending(pendingSent, partition: 0, offset: 1, subjects: [Self.reserved("a", at: Self.t).subject].compactMap { $0 })
        try store.addPending(Self.reserved("b", at: Self.t + 4), partition: 0, offset: 2, subjects: [])
        #expect(store.pendingCount == 2)
        #expect(try store.state(of: Self.n("a"))?.status == .sent, "the pending outcome merges with the stored reservation")
        #expect(try Self.acknowledged(store, "a") == Self.t + 3)
        #expect(try Self.counted(store, since: Self.t + 2) == [Self.n("a"), Self.n("b")], "a counts until its outcome, b from the overlay alone")
        // The tail applies the outcome fact: it leaves the overlay; b is still pending.
        try store.apply(partition: 0, facts: Self.log([pendingSent], from: 1))
        #expect(store.pendingCount == 1)
        #expect(try store.state(of: Self.n("b"))?.status == .reserved)
        try store.apply(partition: 0, facts: Self.log([Self.reserved("b", at: Self.t + 4)], from: 2))
        #expect(store.pendingCount == 0)
        #expect(try Self.counted(store, since: Self.t + 2) == [Self.n("a"), Self.n("b")])
        // A fact the tail applied before its acknowledgement came back is not kept pending.
        try store.addPending(pendingSent, partition: 0, offset: 1, subjects: [])
        #expect(store.pendingCount == 0)
    }

    @Test("read-only: reads what the writer stored, refuses every write; a missing file or another kind of file is refused")
    func readOnly() throws {
        let folder = try TemporaryFolder()
        let path = folder.path("rules.sqlite")
        let writer = try RulesStore(path: path)
        try writer.apply(partition: 2, facts: Self.log([Self.sent("a", at: Self.t)]))
        let reader = try RulesStore(path: path, readOnly: true)
        #expect(try reader.state(of: Self.n("a"))?.status == .sent && reader.nextOffset(partition: 2) == 1)
        let writes: [() throws -> Void] = [
            { try reader.apply(partition: 2, facts: Self.log([Self.sent("b", at: Self.t)], from: 1)) },
            { try reader.reset(partition: 2) },
            { _ = try reader.sweep(now: .max, limit: 10) },
            { try reader.addPending(Self.sent("b", at: Self.t), partition: 2, offset: 1, subjects: []) },
        ]
        for write in writes {
            let error = #expect(throws: RulesStoreError.self) { try write() }
            #expect(error?.code == .readOnly)
        }
        #expect(try writer.nextOffset(partition: 2) == 1 && writer.state(of: Self.n("b")) == nil)
        #expect(throws: RulesStoreError.self) { try RulesStore(path: folder.path("missing.sqlite"), readOnly: true) }
        let other = folder.path("other.sqlite")
        try SQLiteConnection(path: other, readOnly: false).execute("CREATE TABLE users (user TEXT)")
        let error = #expect(throws: RulesStoreError.self) { try RulesStore(path: other) }
        #expect(error?.code == .unusableFile)
        try Data("not a database at all, just text that is long enough to be looked at".utf8).write(to: URL(fileURLWithPath: folder.path("text")))
        let text = #expect(throws: RulesStoreError.self) { try RulesStore(path: folder.path("text")) }
        #expect(text?.code == .unusableFile)
    }
}
