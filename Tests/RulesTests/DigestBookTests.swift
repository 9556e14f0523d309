import Rules
import TestSupport
import Testing

/// Digest windows (``DigestBook``) and their facts in the changelog (``DigestFact``, kinds 6
/// and 7 of ``FactCodec``), without I/O: an event opens, joins or is a duplicate; a window is
/// due at its end and closes to nothing, its one event, or `many`; facts round-trip, damage never
/// crashes the decoder, and any order of a set of facts with duplicates gives the same book.
@Suite("Digest windows: the book and its facts")
struct DigestBookTests {
    static let minute: Int64 = 60_000
    static let t0: Int64 = 1_795_000_000_000

    static func member(
        _ key: String, _ eventID: String, at: Int64, window: NotificationID, opened: Int64, actor: String? = nil, sentAtOnce: Bool = false,
        owner: String = "w1"
    ) -> DigestMember {
        let event = DigestEvent(
            topic: "comments", partition: 3, offset: 42, timestamp: at, key: Array(key.utf8), value: Array(#"{"id":"\#(eventID)"}"#.utf8),
            headers: [DigestHeader(name: "traceparent", value: Array("00-ab-cd-01".utf8)), DigestHeader(name: "empty", value: nil)])
        return DigestMember(
            window: window, key: key, mapping: "comment.created", opened: opened, end: opened + 10 * minute, eventID: eventID, at: at,
            actor: actor, sentAtOnce: sentAtOnce, event: event, owner: owner)
    }

    /// Decides `eventID` at `at` and applies the member fact the owner would write: the decision.
    @discardableResult
    static func add(
        _ book: inout DigestBook, _ key: String, _ eventID: String, at: Int64, actor: String? = nil, sentAtOnce: Bool = false
    ) -> DigestBook.Decision {
        let decision = book.decide(key: key, mapping: "comment.created", eventID: eventID, at: at, window: 10 * minute)
        switch decision {
        case .open(let id, _):
            book.apply(.member(member(key, eventID, at: at, window: id, opened: at, actor: actor, sentAtOnce: sentAtOnce)))
        case .join(let id, _):
            let opened = book.windows[id]!.opened
            book.apply(.member(member(key, eventID, at: at, window: id, opened: opened, actor: actor, sentAtOnce: sentAtOnce)))
        case .duplicate: break
        }
        return decision
    }

    @Test("the first event of a key opens a window, later ones join it until its end, one read again is a duplicate")
    func openJoinDuplicate() throws {
        var book = DigestBook()
        let first = Self.add(&book, "u1\u{1F}p1", "e1", at: Self.t0, actor: "Bob")
        guard case .open(let id, let end) = first else {
            Issue.record("\(first)")
            return
        }
        #expect(end == Self.t0 + 10 * Self.minute)
        #expect(Self.add(&book, "u1\u{1F}p1", "e2", at: Self.t0 + Self.minute, actor: "Al") == .join(id, end: end))
        #expect(Self.add(&book, "u1\u{1F}p1", "e1", at: Self.t0 + 2 * Self.minute) == .duplicate)
        #expect(Self.add(&book, "u1\u{1F}p2", "e3", at: Self.t0 + 2 * Self.minute) != .join(id, end: end), "another key")
        #expect(Self.add(&book, "u1\u{1F}p1", "e4", at: end, actor: "Bob") != .join(id, end: end), "at its end: a new window")
        #expect(book.due(at: end - 1).isEmpty)
        #expect(book.due(at: end).map(\.id) == [id])
        #expect(book.nextEnd() == end)
    }

    @Test("a close sends nothing, the one event counted, or many with the count and actors; first: now leaves the first out")
    func closing() throws {
        var book = DigestBook()
        Self.add(&book, "one", "a1", at: Self.t0)
        for (i, actor) in ["Bob", "Al", "Bob"].enumerated() { Self.add(&book, "three", "b\(i)", at: Self.t0 + Int64(i), actor: actor) }
        Self.add(&book, "first-now", "c0", at: Self.t0, sentAtOnce: true)
        Self.add(&book, "first-now", "c1", at: Self.t0 + 5)
        Self.add(&book, "only-first", "d0", at: Self.t0, sentAtOnce: true)
        func closing(_ key: String) -> DigestBook.Closing { book.closing(book.openWindow(key: key, mapping: "comment.created")!) }
        guard case .single(let one) = closing("one") else {
            Issue.record("one")
            return
        }
        #expect(one.eventID == "a1")
        #expect(
            closing("three")
                == .many(
                    last: book.openWindow(key: "three", mapping: "comment.created")!.members["b2"]!, count: 3, firstActor: "Bob", lastActor: "Bob",
                    distinctActors: 2))
        guard case .single(let second) = closing("first-now") else {
            Issue.record("first-now")
            return
        }
        #expect(second.eventID == "c1")
        #expect(closing("only-first") == .nothing)
    }

    @Test("after a close, its members are duplicates, a member it did not account for is not, and a new event opens a new window")
    func afterClose() throws {
        var book = DigestBook()
        guard case .open(let id, let end) = Self.add(&book, "k", "e1", at: Self.t0) else {
            Issue.record("open")
            return
        }
        Self.add(&book, "k", "e2", at: Self.t0 + 1)
        let close = DigestClosed(window: id, at: end, members: ["e1", "e2"], owner: "w1")
        let closedOpen = book.apply(.closed(close))
        let closedAgain = book.apply(.closed(close))
        #expect(closedOpen, "closing an open window moves the next end")
        #expect(!closedAgain, "read again: nothing moves")
        #expect(book.due(at: end + 1).isEmpty && book.nextEnd() == nil)
        #expect(book.decide(key: "k", mapping: "comment.created", eventID: "e2", at: end + 1, window: 10 * Self.minute) == .duplicate)
        // A member a fenced owner wrote after the close: not accounted for, so it is digested again.
        let joinedKnown = book.apply(.member(Self.member("k", "e3", at: Self.t0 + 2, window: id, opened: Self.t0)))
        #expect(!joinedKnown, "a member of a known window")
        guard case .open = book.decide(key: "k", mapping: "comment.created", eventID: "e3", at: end + 2, window: 10 * Self.minute) else {
            Issue.record("e3 should open a new window")
            return
        }
        book.forget(endedBefore: end + 1)
        #expect(book.windows.isEmpty)
    }

    @Test("any order of a set of facts, with duplicates, gives the same book")
    func lattice() throws {
        var rng = SplitMix64(seed: 56)
        let w1 = NotificationID(digestKey: "k1", mapping: "comment.created", opened: Self.t0)
        let w2 = NotificationID(digestKey: "k2", mapping: "comment.created", opened: Self.t0)
        let facts: [DigestFact] = [
            .member(Self.member("k1", "e1", at: Self.t0, window: w1, opened: Self.t0, sentAtOnce: true)),
            .member(Self.member("k1", "e1", at: Self.t0 + 3, window: w1, opened: Self.t0, owner: "w2")),
            .member(Self.member("k1", "e2", at: Self.t0 + 1, window: w1, opened: Self.t0, actor: "Al")),
            .member(Self.member("k2", "f1", at: Self.t0, window: w2, opened: Self.t0)),
            .closed(DigestClosed(window: w2, at: Self.t0 + 10 * Self.minute, members: ["f1"], owner: "w1")),
            .closed(DigestClosed(window: w1, at: Self.t0 + 10 * Self.minute, members: ["e1"], owner: "w2")),
        ]
        var reference = DigestBook()
        for fact in facts { reference.apply(fact) }
        #expect(reference.windows[w1]?.members["e1"]?.sentAtOnce == true && reference.windows[w1]?.members["e1"]?.at == Self.t0)
        for _ in 0..<500 {
            var shuffled = facts + facts.filter { _ in rng.next() % 3 == 0 }
            shuffled.shuffle(using: &rng)
            var book = DigestBook()
            for fact in shuffled { book.apply(fact) }
            #expect(book.windows == reference.windows)
        }
    }

    @Test("member and closed facts round-trip, alone and in a record with notification facts")
    func codec() throws {
        let id = NotificationID(digestKey: "u1\u{1F}p1", mapping: "comment.created", opened: Self.t0)
        var bare = Self.member("u1", "e9", at: Self.t0, window: id, opened: Self.t0)
        bare.event.key = nil
        bare.event.timestamp = nil
        bare.event.headers = []
        let facts: [Fact] = [
            .digest(.member(Self.member("u1\u{1F}p1", "e1", at: Self.t0 + 5, window: id, opened: Self.t0, actor: "Bob", sentAtOnce: true))),
            .digest(.member(bare)),
            .digest(.closed(DigestClosed(window: id, at: Self.t0 + 10 * Self.minute, members: ["e2", "e1"], owner: "w1:3:2:99"))),
            .claim(Claim(at: Self.t0, owner: "w1", partitionCount: 8)),
        ]
        for fact in facts { #expect(try FactCodec.decode(FactCodec.encode(fact)) == fact) }
        #expect(try FactCodec.decodeRecord(FactCodec.encodeRecord(facts)) == facts)
    }

    @Test("every truncation and random byte flips of digest facts are errors, never crashes")
    func damage() throws {
        var rng = SplitMix64(seed: 7)
        let id = NotificationID(digestKey: "k", mapping: "m", opened: Self.t0)
        for fact in [
            Fact.digest(.member(Self.member("k", "e1", at: Self.t0, window: id, opened: Self.t0, actor: "Bob"))),
            .digest(.closed(DigestClosed(window: id, at: Self.t0, members: ["a", "b"], owner: "w"))),
        ] {
            let bytes = FactCodec.encode(fact)
            for cut in 0..<bytes.count { #expect(throws: FactCodecError.self) { _ = try FactCodec.decode(bytes.prefix(cut)) } }
            for _ in 0..<2_000 {
                var flipped = bytes
                flipped[Int(rng.next() % UInt64(bytes.count))] ^= UInt8(truncatingIfNeeded: rng.next() | 1)
                _ = try? FactCodec.decode(flipped)
            }
        }
    }
}
