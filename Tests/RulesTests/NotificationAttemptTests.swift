import Rules
import Testing

extension NotificationAttempt.Decision {
    var reservation: NotificationFact? { if case .reserve(let f) = self { f } else { nil } }
    var wait: InFlightTable.Wait? { if case .wait(let w) = self { w } else { nil } }
}

extension NotificationAttempt.ReadBack {
    var released: NotificationFact? { if case .release(let f) = self { f } else { nil } }
}

@Suite("A notification's way through its owner: decide, reserve, read back, send, record")
struct NotificationAttemptTests {
    let policy = RulesPolicy(sendLimit: 10)
    let cap = CapRule(max: 1, per: 1_000, by: [.user])
    let owner = "m1:3:abc"

    func n(_ id: String) -> NotificationID { NotificationID(eventID: id, mapping: "chat", subject: "u") }
    var subject: CapSubject { CapSubject(user: "u", category: "social", mapping: "chat", devices: [DeviceKey(target: "fid:a")]) }

    func attempt(_ id: String, targets: [String] = ["fid:a", "fid:b"], caps: [CapRule]? = nil, owner: String? = nil) -> NotificationAttempt {
        NotificationAttempt(
            notification: n(id), subject: subject, targets: targets, caps: caps ?? [cap], dedupWindow: 500, policy: policy, owner: owner ?? self.owner
        )
    }

    func fact(_ id: String, _ status: FactStatus, attempt: UInt32 = 1, at: Int64, acknowledged: [String] = []) -> Fact {
        .notification(
            NotificationFact(
                notification: n(id), status: status, attempt: attempt, at: at, expires: at + 5_000, owner: "earlier", subject: subject,
                devices: acknowledged.map { DevicePushID(notification: n(id), target: $0) }))
    }

    /// A tail that has read its claim at 0 and then `facts` at 1, 2, …, applying what it admits.
    func tail(_ facts: [Fact], owner: String? = nil) -> (ChangelogTail, InMemoryRulesState) {
        var tail = ChangelogTail(owner: owner ?? self.owner)
        var state = InMemoryRulesState()
        _ = tail.read(.claim(Claim(at: 0, owner: owner ?? self.owner, partitionCount: 1)), at: 0)
        for (i, f) in facts.enumerated() where tail.read(f, at: Int64(i + 1)) == .apply { state.apply(f) }
        return (tail, state)
    }

    @Test("room: a reservation with the next attempt number, the subject, this owner and the longest window's expiry; begun in flight")
    func reserves() throws {
        var table = InFlightTable()
        var state = InMemoryRulesState()
        state.apply(fact("e", .released, attempt: 3, at: 10))
        var a = attempt("e")
        let decision = a.decide(now: 100, state: state, inFlight: &table)
        let expected = NotificationFact(
            notification: n("e"), status: .reserved, attempt: 4, at: 100, expires: 100 + 1_000 + 10, owner: owner, subject: subject)
        #expect(decision == .reserve(expected))
        #expect(a.stage == .reserving(at: 100) && table.isInFlight(n("e")))
        var again = attempt("e")
        #expect(again.decide(now: 101, state: state, inFlight: &table) == .wait(.notification(n("e"))), "the same notification in flight here waits")
        #expect(again.stage == .deciding)
    }

    @Test("dedup: acknowledged targets drop out; all of them acknowledged is a duplicate, nothing reserved")
    func dedup() throws {
        var table = InFlightTable()
        var state = InMemoryRulesState()
        state.apply(fact("e", .reserved, at: 100))
        state.apply(fact("e", .sent, at: 120, acknowledged: ["fid:a"]))
        var one = attempt("e")
        let r = try #require(one.decide(now: 200, state: state, inFlight: &table).reservation, "no reservation")
        #expect(one.targets == ["fid:b"] && r.attempt == 2)
        var elsewhere = InFlightTable()  // another event's turn, with nothing in flight
        var both = attempt("e", targets: ["fid:a"])
        #expect(both.decide(now: 300, state: state, inFlight: &elsewhere) == .duplicate && both.stage == .finished)
        var later = attempt("e", targets: ["fid:a"])
        #expect(later.decide(now: 620, state: state, inFlight: &elsewhere) != .duplicate, "the window (500 ms) has passed")
    }

    @Test("a full cap withholds; full only with pushes in flight here waits for them")
    func caps() throws {
        var state = InMemoryRulesState()
        state.apply(fact("x", .reserved, at: 100))
        state.apply(fact("x", .sent, at: 110, acknowledged: ["fid:a"]))
        var table = InFlightTable()
        var a = attempt("e")
        #expect(a.decide(now: 200, state: state, inFlight: &table) == .capped(key: cap.keys(of: subject)[0], counted: 1))
        #expect(a.stage == .finished && table.count == 0)

        var first = attempt("f")
        _ = try #require(first.decide(now: 1_200, state: state, inFlight: &table).reservation, "no reservation")
        var second = attempt("g")
        #expect(second.decide(now: 1_201, state: state, inFlight: &table) == .wait(.anyOf([n("f")])))
        #expect(second.stage == .deciding, "it decides again when f resolves")
    }

    @Test("read back: not yet until the tail passes the reservation; fenced by a foreign claim between; then send until the limit")
    func readBack() throws {
        var table = InFlightTable()
        var a = attempt("e")
        let reservation = try #require(a.decide(now: 100, state: InMemoryRulesState(), inFlight: &table).reservation, "no reservation")
        a.reserved(at: 2)
        let (early, _) = tail([fact("x", .sent, at: 1, acknowledged: [])])
        #expect(a.readBack(early, now: 101, state: InMemoryRulesState()) == .notYet)
        #expect(!a.maySend(at: 101))

        var fenced = a
        let foreign = Fact.claim(Claim(at: 50, owner: "m2:4:def", partitionCount: 1))
        let (stolen, _) = tail([foreign, .notification(reservation)])
        #expect(fenced.readBack(stolen, now: 102, state: InMemoryRulesState()) == .fenced(byClaimAt: 1))
        #expect(fenced.stage == .finished && !fenced.maySend(at: 102))

        let (clear, state) = tail([fact("x", .sent, at: 1), .notification(reservation)])
        #expect(a.readBack(clear, now: 103, state: state) == .send)
        #expect(a.maySend(at: 110) && !a.maySend(at: 111), "reserved at 100, send limit 10")
    }

    @Test("read back after the targets were acknowledged meanwhile, or past the send limit: released, nothing sent")
    func releasedAtReadBack() throws {
        var table = InFlightTable()
        var a = attempt("e", targets: ["fid:a"])
        let reservation = try #require(a.decide(now: 100, state: InMemoryRulesState(), inFlight: &table).reservation, "no reservation")
        a.reserved(at: 1)
        var late = a
        let (t, state) = tail([.notification(reservation), fact("e", .sent, attempt: 1, at: 101, acknowledged: ["fid:a"])])
        let released = NotificationFact(notification: n("e"), status: .released, attempt: 1, at: 102, expires: 102 + 1_010, owner: owner)
        #expect(a.readBack(t, now: 102, state: state) == .release(released))
        #expect(a.stage == .recording)
        let (t2, state2) = tail([.notification(reservation)])
        let f = try #require(late.readBack(t2, now: 111, state: state2).released, "sent past the limit")
        #expect(f.status == .released && f.attempt == 1)
        #expect(table.isInFlight(n("e")), "in flight until the outcome is recorded")
        #expect(a.recorded(in: &table) == [] && !table.isInFlight(n("e")))
    }

    @Test(
        "the outcome: sent with the acknowledged pushes at their time, else in doubt if any answer may hide a delivery, else released",
        arguments: [
            ([PushAnswer.accepted, .unknown], FactStatus.sent),
            ([.refused, .accepted], .sent),
            ([.refused, .unknown], .inDoubt),
            ([.refused, .refused], .released),
        ])
    func outcome(answers: [PushAnswer], status: FactStatus) throws {
        var table = InFlightTable()
        var a = attempt("e")
        let reservation = try #require(a.decide(now: 100, state: InMemoryRulesState(), inFlight: &table).reservation, "no reservation")
        a.reserved(at: 1)
        let (t, state) = tail([.notification(reservation)])
        #expect(a.readBack(t, now: 101, state: state) == .send)
        let fact = a.answered(["fid:a": answers[0], "fid:b": answers[1]], deliveredBy: 105, now: 107)
        #expect(fact.status == status && fact.attempt == 1 && fact.owner == owner)
        #expect(fact.at == (status == .sent ? 105 : 107))
        let acked = zip(["fid:a", "fid:b"], answers).filter { $0.1 == .accepted }.map { DevicePushID(notification: n("e"), target: $0.0) }
        #expect(fact.devices == acked.sorted())
    }

    @Test("recording the outcome wakes the events waiting on the notification")
    func wakes() throws {
        var table = InFlightTable()
        var a = attempt("e")
        let reservation = try #require(a.decide(now: 100, state: InMemoryRulesState(), inFlight: &table).reservation, "no reservation")
        var b = attempt("e")
        let wait = try #require(b.decide(now: 100, state: InMemoryRulesState(), inFlight: &table).wait, "no wait")
        #expect(table.wait(7, for: wait) == [])
        a.reserved(at: 1)
        let (t, state) = tail([.notification(reservation)])
        _ = a.readBack(t, now: 101, state: state)
        _ = a.answered(["fid:a": .accepted], deliveredBy: 102, now: 102)
        #expect(a.recorded(in: &table) == [7] && a.stage == .finished)
    }

    @Test("no targets left by the stateless rules: an earlier owner's unresolved reservations are settled in doubt, nothing else")
    func settles() throws {
        var state = InMemoryRulesState()
        state.apply(fact("e", .reserved, attempt: 1, at: 100))
        state.apply(fact("e", .reserved, attempt: 2, at: 200))
        state.apply(fact("e", .released, attempt: 2, at: 210))
        var table = InFlightTable()
        var a = attempt("e", targets: [])
        let settled = NotificationFact(notification: n("e"), status: .inDoubt, attempt: 1, at: 300, expires: 300 + 1_010, owner: owner)
        #expect(a.decide(now: 300, state: state, inFlight: &table) == .settle([settled]))
        var fresh = attempt("f", targets: [])
        #expect(fresh.decide(now: 300, state: state, inFlight: &table) == .settle([]) && table.count == 0)
    }
}
