import Rules
import Testing

/// ``ChangelogTail``, the owner's reading of a state partition's changelog (docs/rules-state.md).
/// The ownership model (OwnershipModelTests) runs it through every interleaving; these pin each
/// decision down on a hand-written log.
@Suite("The changelog tail: claims, what the state takes, fencing")
struct ChangelogTailTests {
    func fact(_ event: String, _ status: FactStatus, by owner: String) -> Fact {
        let n = NotificationID(eventID: event, mapping: "chat", subject: "u")
        return .notification(
            NotificationFact(
                notification: n, status: status, attempt: 1, at: 10, expires: 1_000, owner: owner,
                subject: CapSubject(user: "u", category: nil, mapping: "chat"),
                devices: status == .sent ? [DevicePushID(notification: n, target: "fid:a")] : []))
    }

    func claim(by owner: String) -> Fact { .claim(Claim(at: 5, owner: owner, partitionCount: 4)) }

    /// Reads `log` from `start` and returns what it admitted, by offset.
    func read(_ log: [Fact], into tail: inout ChangelogTail, from start: Int = 0) -> [ChangelogTail.Admission] {
        log.indices.dropFirst(start).map { tail.read(log[$0], at: Int64($0)) }
    }

    @Test("before its claim the state takes every fact; after it, a foreign reservation is left out, foreign outcomes and its own facts are not")
    func admission() {
        let log = [
            fact("e1", .reserved, by: "old#1"),  // 0: the previous owner's, before the claim
            claim(by: "new#1"),  // 1
            fact("e2", .reserved, by: "old#1"),  // 2: a zombie's, after the claim: left out
            fact("e1", .sent, by: "old#1"),  // 3: the zombie's outcome of an earlier send: applied
            fact("e3", .reserved, by: "new#1"),  // 4: its own
        ]
        var tail = ChangelogTail(owner: "new#1")
        #expect(!tail.restored)
        let admitted = read(log, into: &tail)
        #expect(admitted == [.apply, .claim(ours: true), .leaveOut, .apply, .apply])
        #expect(tail.restored && tail.claim == 1 && tail.next == 5)
    }

    @Test("a reservation is sent only once read back with no foreign claim between its owner's claim and it")
    func readBack() {
        var tail = ChangelogTail(owner: "a#1")
        #expect(tail.readBack(ofReservationAt: 0) == .notYet, "no claim read yet")
        var log = [claim(by: "a#1"), fact("e1", .reserved, by: "a#1")]
        _ = read(log, into: &tail)
        #expect(tail.readBack(ofReservationAt: 1) == .clear)
        #expect(tail.readBack(ofReservationAt: 2) == .notYet, "not read yet")

        log += [claim(by: "b#1"), fact("e2", .reserved, by: "a#1")]  // b claims; a's next reservation comes after it
        _ = read(log, into: &tail, from: 2)
        #expect(tail.readBack(ofReservationAt: 3) == .fenced(byClaimAt: 2))
        #expect(tail.readBack(ofReservationAt: 1) == .clear, "the earlier one was before b's claim")
    }

    @Test("a fencing claim made before this member's own was written late; one made after it means another member holds the partition")
    func lateClaims() {
        var tail = ChangelogTail(owner: "a#1")
        let log: [Fact] = [
            .claim(Claim(at: 100, owner: "a#1", partitionCount: 2)),  // 0
            .claim(Claim(at: 90, owner: "z#1", partitionCount: 2)),  // 1: made before a's, written after
            .claim(Claim(at: 110, owner: "b#1", partitionCount: 2)),  // 2: made after a's
        ]
        for (offset, fact) in log.enumerated() { _ = tail.read(fact, at: Int64(offset)) }
        #expect(tail.claimedAt == 100)
        #expect(tail.isLateClaim(atOffset: 1))
        #expect(!tail.isLateClaim(atOffset: 2))
        #expect(!tail.isLateClaim(atOffset: 0), "its own claim")
        tail.reclaim(as: "a#2")
        #expect(tail.claimedAt == nil && !tail.isLateClaim(atOffset: 1), "a re-claim forgets the claims it read")
    }

    /// The ownership model's finding: a member fenced by a late claim claims again, and its
    /// state must count the late claimer's reservations between the two claims (they were sent).
    @Test("a re-claim under a new owner ID reads from the start: the late claimer's reservations before the new claim count")
    func reclaim() {
        var log = [
            claim(by: "a#1"),  // 0
            claim(by: "z#1"),  // 1: a zombie's late claim
            fact("e1", .reserved, by: "z#1"),  // 2: left out by a (after its claim), and sent by z
        ]
        var tail = ChangelogTail(owner: "a#1")
        #expect(read(log, into: &tail) == [.claim(ours: true), .claim(ours: false), .leaveOut])
        log.append(fact("e2", .reserved, by: "a#1"))  // 3: a's reservation, fenced by z's claim
        _ = read(log, into: &tail, from: 3)
        #expect(tail.readBack(ofReservationAt: 3) == .fenced(byClaimAt: 1))

        tail.reclaim(as: "a#2")
        #expect(!tail.restored && tail.next == 0)
        log.append(claim(by: "a#2"))  // 4
        let admitted = read(log, into: &tail)
        #expect(admitted == [.claim(ours: false), .claim(ours: false), .apply, .apply, .claim(ours: true)], "z's reservation now counts")
        #expect(tail.claim == 4)
        log.append(fact("e3", .reserved, by: "a#2"))
        _ = read(log, into: &tail, from: 5)
        #expect(tail.readBack(ofReservationAt: 5) == .clear)
    }

    @Test("a record that is not a fact is read past")
    func skip() {
        var tail = ChangelogTail(owner: "a#1")
        _ = tail.read(claim(by: "a#1"), at: 0)
        tail.skip(1)
        #expect(tail.next == 2)
        _ = tail.read(fact("e1", .reserved, by: "a#1"), at: 2)
        #expect(tail.readBack(ofReservationAt: 2) == .clear)
    }
}
