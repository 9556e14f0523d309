import Testing

/// The reliability ledger's rules for capped events (``CappedSubjects``), without a run: what it
/// counts as withheld, lost, beyond the cap, and delivered twice.
@Suite("Reliability ledger: capped subjects")
struct LedgerCapsTests {
    /// `a`: 4 distinct events, the first written twice; `b`: one event written twice.
    static var capped: CappedSubjects {
        var c = CappedSubjects(max: 2)
        c.written = ["a": ["a0", "a0", "a1", "a2", "a3"], "b": ["b0", "b0"]]
        c.rekeyed = ["a0": 2, "a1": 1, "a2": 1, "a3": 1, "b0": 3]
        return c
    }

    @Test("exactly the cap's notifications: the rest withheld as capped or as repeats, a second acceptance a duplicate")
    func exact() {
        let s = Self.capped.settle(delivered: ["a": ["a1": 1, "a3": 2], "b": ["b0": 1]], deadLetters: [:])
        #expect(s.notifications == 3 && s.expected == 3)
        #expect(s.cappedWithheld == 2, "a0 and a2")
        #expect(s.dedupWithheld == 2, "the repeats of a0 and b0")
        #expect(s.duplicates == 1, "a3 accepted twice")
        #expect(s.exceeded.isEmpty && s.short.isEmpty && s.deadLettered.isEmpty)
    }

    @Test("a third notification, or one of an event never written for the subject, exceeds the cap")
    func exceeded() {
        let three = Self.capped.settle(delivered: ["a": ["a0": 1, "a1": 1, "a2": 1], "b": ["b0": 1]], deadLetters: [:])
        #expect(three.exceeded.count == 1)
        let stranger = Self.capped.settle(delivered: ["a": ["a0": 1, "b0": 1], "b": ["b0": 1]], deadLetters: [:])
        #expect(stranger.exceeded.count == 1)
    }

    @Test("fewer notifications than the cap allows, or an event never re-keyed, is lost; a capped event dead-lettered is named")
    func lost() {
        let fewer = Self.capped.settle(delivered: ["a": ["a0": 1], "b": ["b0": 1]], deadLetters: ["b": ["capped (x)"]])
        #expect(fewer.short.count == 1)
        #expect(fewer.deadLettered == ["b: capped (x)"])
        var missing = Self.capped
        missing.rekeyed?["a0"] = 1
        let notRekeyed = missing.settle(delivered: ["a": ["a0": 1, "a1": 1], "b": ["b0": 1]], deadLetters: [:])
        #expect(notRekeyed.short == ["a0: written 2 times, re-keyed 1"])
    }

    @Test("the ledger counts the capped events' losses, duplicates and dead letters with the others'")
    func folded() {
        var ledger = Ledger(tokens: ["t"])
        ledger.capped = Self.capped
        let s = ledger.settle(accepted: ["t": 1], deadLetters: [], delivered: ["a": ["a1": 2], "b": ["b0": 1]])
        #expect(ledger.events == 8)
        #expect(s.lost.count == 1, "a got 1 of the 2 its cap allows")
        #expect(s.duplicates == 1)
    }
}
