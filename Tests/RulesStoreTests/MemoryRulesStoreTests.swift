import Rules
import RulesStore
import Testing

/// The state of caps and dedup in memory (`rules.state_store: memory`): what the file store's
/// tests check of offsets, reset and the sweep. Its answers are checked against
/// ``InMemoryRulesState`` in ``RulesStoreDifferentialTests``.
@Suite("The rules store in memory")
struct MemoryRulesStoreTests {
    typealias T = RulesStoreTests
    static let byDevice = CapKey(user: nil, category: nil, mapping: nil, device: DeviceKey(target: "fid:a"))

    static func counted(_ store: MemoryRulesStore, _ key: CapKey = T.byUser, since: Int64 = T.t - 1) -> Set<NotificationID> {
        Set(store.notifications(of: key, countingAfter: since, policy: T.policy).map(\.0))
    }

    @Test("facts below the partition's next offset are skipped; an owner's own fact counts at once, and again when read back to no effect")
    func offsets() {
        let store = MemoryRulesStore()
        store.apply(partition: 0, facts: T.log([T.reserved("a", at: T.t)], from: 5))
        #expect(store.nextOffset(partition: 0) == 6 && store.nextOffset(partition: 1) == nil)
        store.apply(partition: 0, facts: T.log([T.sent("a", at: T.t + 1)], from: 5))  // below 6: read before
        #expect(store.state(of: T.n("a"))?.status == .reserved)
        store.addPending(T.sent("a", at: T.t + 1), partition: 0, offset: 6, subjects: [])
        #expect(store.state(of: T.n("a"))?.status == .sent)
        let once = store.state(of: T.n("a"))
        store.apply(partition: 0, facts: T.log([T.sent("a", at: T.t + 1)], from: 6))
        #expect(store.state(of: T.n("a")) == once && store.nextOffset(partition: 0) == 7)
    }

    @Test("reset forgets a partition's notifications and offset, and no other partition's")
    func reset() {
        let store = MemoryRulesStore()
        let a = T.log([T.reserved("a", at: T.t), T.sent("a", at: T.t)], from: 1)
        store.apply(partition: 0, facts: a)
        store.apply(partition: 1, facts: T.log([T.reserved("b", at: T.t), T.sent("b", at: T.t)]))
        store.addPending(T.reserved("c", at: T.t), partition: 0, offset: 3, subjects: [])
        #expect(Self.counted(store) == [T.n("a"), T.n("b"), T.n("c")])
        #expect(Self.counted(store, Self.byDevice) == [T.n("a"), T.n("b"), T.n("c")])
        store.reset(partition: 0)
        #expect(store.nextOffset(partition: 0) == nil && store.nextOffset(partition: 1) == 2)
        #expect(store.state(of: T.n("a")) == nil && store.state(of: T.n("c")) == nil && store.count == 1)
        #expect(Self.counted(store) == [T.n("b")] && Self.counted(store, Self.byDevice) == [T.n("b")])
        // Restored from the start, it answers as before.
        store.apply(partition: 0, facts: a)
        #expect(Self.counted(store) == [T.n("a"), T.n("b")])
    }

    @Test("the sweep forgets notifications whose expiry passed, in batches of at most its limit, and the indexes with them")
    func sweep() {
        let store = MemoryRulesStore()
        let ids = (0..<5).map { ("e\($0)", T.t + 100) } + [("late", T.t + 60_100)]
        let token = NotificationFact(
            notification: T.n("token"), status: .reserved, attempt: 1, at: T.t, expires: T.t + 100, owner: "w",
            subject: CapSubject(user: nil, category: nil, mapping: "chat", devices: [DeviceKey(target: "fid:t")]))
        store.apply(partition: 0, facts: T.log(ids.map { T.reserved($0.0, at: T.t, expires: $0.1) } + [token]))
        store.apply(partition: 0, facts: T.log(ids.map { T.sent($0.0, at: T.t, expires: $0.1) }, from: 7))
        // A later fact moves an expiry on: swept at the later one only.
        store.apply(partition: 0, facts: T.log([T.sent("e4", at: T.t, expires: T.t + 120_000)], from: 13))
        #expect(store.sweep(now: T.t + 99, limit: 100) == 0)
        #expect(store.sweep(now: T.t + 100, limit: 3) == 3)
        #expect(store.sweep(now: T.t + 100, limit: 3) == 2)
        #expect(store.sweep(now: T.t + 60_099, limit: 3) == 0)
        #expect(store.state(of: T.n("e0")) == nil && store.state(of: T.n("late")) != nil && store.state(of: T.n("e4")) != nil)
        #expect(Self.counted(store, Self.byDevice) == [T.n("late"), T.n("e4")])
        let tokenKey = CapKey(user: nil, category: nil, mapping: nil, device: DeviceKey(target: "fid:t"))
        #expect(Self.counted(store, tokenKey).isEmpty)
        #expect(store.sweep(now: T.t + 60_100, limit: 10) == 1)
        #expect(store.sweep(now: T.t + 120_000, limit: 10) == 1)
        #expect(store.count == 0 && Self.counted(store).isEmpty && Self.counted(store, Self.byDevice).isEmpty)
    }
}
