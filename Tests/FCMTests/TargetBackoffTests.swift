import Testing

@testable import FCM

@Suite("TargetBackoff: one throttled device or topic held, the rest free, without I/O")
struct TargetBackoffTests {
    let t0 = ContinuousClock.now
    let chatty = MessageTarget(.token, "chatty-device")
    let quiet = MessageTarget(.token, "quiet-device")

    @Test("a held target waits until its time; other targets never do")
    func holds() {
        var b = TargetBackoff()
        #expect(b.isEmpty)
        #expect(b.strike(chatty) == 1)
        b.hold(chatty, until: t0 + .seconds(2), now: t0)
        #expect(b.heldUntil(chatty, now: t0 + .seconds(1)) == t0 + .seconds(2))
        #expect(b.heldUntil(chatty, now: t0 + .seconds(2)) == nil)
        #expect(b.heldUntil(quiet, now: t0 + .seconds(1)) == nil)
        #expect(b.heldUntil(MessageTarget(.fid, "chatty-device"), now: t0) == nil, "an FID is not the token with the same text")
    }

    @Test("strikes count 429s in a row; a hold is never shortened; a success clears the target")
    func strikes() {
        var b = TargetBackoff()
        _ = b.strike(chatty)
        b.hold(chatty, until: t0 + .seconds(5), now: t0)
        #expect(b.strike(chatty) == 2)
        b.hold(chatty, until: t0 + .seconds(1), now: t0)
        #expect(b.heldUntil(chatty, now: t0 + .seconds(3)) == t0 + .seconds(5))
        b.cleared(chatty)
        #expect(b.isEmpty)
        #expect(b.strike(chatty) == 1)
    }

    @Test("past its size, expired holds are dropped when another is added")
    func prunes() {
        var b = TargetBackoff(pruneAbove: 3)
        for i in 0..<3 { b.hold(MessageTarget(.topic, "t\(i)"), until: t0 + .seconds(1), now: t0) }
        b.hold(MessageTarget(.topic, "live"), until: t0 + .seconds(60), now: t0 + .seconds(2))
        #expect(b.entries.count == 1)
        #expect(b.heldUntil(MessageTarget(.topic, "live"), now: t0 + .seconds(2)) != nil)
    }
}
