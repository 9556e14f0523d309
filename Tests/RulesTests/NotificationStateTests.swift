import Rules
import Testing

@Suite("The fact lattice")
struct NotificationStateTests {
    let n = NotificationID(eventID: "e", mapping: "m", subject: "u")

    func fact(_ status: FactStatus, attempt: UInt32, at: Int64, devices: [UInt64] = []) -> NotificationFact {
        NotificationFact(
            notification: n, status: status, attempt: attempt, at: at, expires: at + 100, owner: "w",
            subject: CapSubject(user: "u", category: nil, mapping: "m"), devices: devices.map(DevicePushID.init))
    }

    @Test("any permutation of a fact set, with duplicates, gives the same state (seeded random)")
    func permutations() {
        var rng = RandomChooser(seed: 55)
        for _ in 0..<3_000 {
            let facts = (0..<1 + rng.choose(8)).map { _ in FactGenerator.notificationFact(n, &rng, attempts: 3) }
            let reference = NotificationState(facts)
            for _ in 0..<5 {
                var shuffled = facts + (0..<rng.choose(6)).map { _ in facts[rng.choose(facts.count)] }
                shuffled.shuffle(using: &rng)
                #expect(NotificationState(shuffled) == reference)
            }
            // Merging states is the same join: split the facts anywhere, merge the halves.
            let cut = rng.choose(facts.count + 1)
            #expect(NotificationState(facts[..<cut]).merged(with: NotificationState(facts[cut...])) == reference)
            #expect(reference.merged(with: reference) == reference)
        }
    }

    @Test("a store built from facts in any order answers the same (InMemoryRulesState)")
    func stores() {
        var rng = RandomChooser(seed: 56)
        for _ in 0..<300 {
            let facts = (0..<20).map { _ in FactGenerator.fact(&rng) }
            var a = InMemoryRulesState()
            var b = InMemoryRulesState()
            for f in facts { a.apply(f) }
            for f in (facts + facts.prefix(5)).shuffled(using: &rng) { b.apply(f) }
            #expect(a == b)
        }
    }

    @Test("status: sent over in doubt over an unresolved reservation over released")
    func statusOrder() {
        var s = NotificationState([fact(.reserved, attempt: 1, at: 10)])
        #expect(s.status == .reserved && s.attempt == 1 && s.hasUnresolvedAttempt)
        s.apply(fact(.released, attempt: 1, at: 12))
        #expect(s.status == .released && !s.hasUnresolvedAttempt)
        #expect(s.countsUntil(sendLimit: 5) == nil)
        s.apply(fact(.reserved, attempt: 2, at: 20))
        #expect(s.status == .reserved && s.attempt == 2)
        #expect(s.countsUntil(sendLimit: 5) == 25)
        s.apply(fact(.inDoubt, attempt: 2, at: 30))
        #expect(s.status == .inDoubt && s.countsUntil(sendLimit: 5) == 30)
        s.apply(fact(.released, attempt: 3, at: 40))
        #expect(s.status == .inDoubt, "a later attempt's release never lowers an earlier in-doubt one")
        s.apply(fact(.sent, attempt: 1, at: 11, devices: [7]))
        #expect(s.status == .sent && s.acknowledged(DevicePushID(7)) == 11)
        #expect(s.countsUntil(sendLimit: 5) == 30, "counts until the latest moment it may have reached a device")
    }

    @Test("a later attempt's release does not hide an earlier attempt whose owner died while sending")
    func earlierUnresolved() {
        let s = NotificationState([fact(.reserved, attempt: 1, at: 10), fact(.reserved, attempt: 2, at: 50), fact(.released, attempt: 2, at: 52)])
        #expect(s.status == .reserved)
        #expect(s.countsUntil(sendLimit: 5) == 15)
    }

    @Test("acknowledgements: the union of the devices, each at its latest time; the least subject")
    func devices() {
        var a = NotificationState([fact(.sent, attempt: 1, at: 10, devices: [1, 2])])
        a.apply(fact(.sent, attempt: 2, at: 30, devices: [2, 3]))
        #expect(a.devices.map(\.push) == [DevicePushID(1), DevicePushID(2), DevicePushID(3)] && a.devices.map(\.at) == [10, 30, 30])
        var b = NotificationState()
        b.apply(
            NotificationFact(
                notification: n, status: .reserved, attempt: 1, at: 1, expires: 9, owner: "x",
                subject: CapSubject(user: "b", category: nil, mapping: "m")))
        b.apply(
            NotificationFact(
                notification: n, status: .reserved, attempt: 1, at: 1, expires: 5, owner: "y",
                subject: CapSubject(user: "a", category: nil, mapping: "m")))
        #expect(b.subject?.user == "a" && b.expires == 9)
    }
}
