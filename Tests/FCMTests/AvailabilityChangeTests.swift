import Testing

@testable import FCM

/// What an FCM outage looks like in the logs (``FCMAvailability/Change``): one line when FCM
/// stops answering, one every 30 s while it does not, with the failed attempts so far, and one
/// when it answers again. Pure: instants in.
@Suite("FCM availability changes: an outage's start, its periodic count, its end")
struct AvailabilityChangeTests {
    let t0 = ContinuousClock.now

    @Test("a wait starts with the first transient failure, is reported every 30 s with its count, and ends with the next answer")
    func outage() {
        var a = FCMAvailability()
        #expect(a.answered(at: t0, success: true) == nil, "no wait to end")
        #expect(
            a.failedTransiently(since: t0 + .seconds(1), reason: "503 UNAVAILABLE", at: t0 + .seconds(2))
                == .stoppedAnswering(reason: "503 UNAVAILABLE"))
        var reports: [FCMAvailability.Change] = []
        // One failed attempt a second for 65 s: two reports, at 30 s and 60 s after the first line.
        for second in 3...67 {
            let start = t0 + .seconds(second) - .milliseconds(100)
            if let change = a.failedTransiently(since: start, reason: "timed out", at: t0 + .seconds(second)) { reports.append(change) }
        }
        #expect(
            reports == [
                .stillNotAnswering(for: .seconds(31), failedAttempts: 31, lastFailure: "timed out"),
                .stillNotAnswering(for: .seconds(61), failedAttempts: 61, lastFailure: "timed out"),
            ])
        #expect(a.answered(at: t0 + .seconds(70), success: true) == .answeringAgain(after: .seconds(69), failedAttempts: 66))
        // The next outage counts from zero again.
        #expect(a.failedTransiently(since: t0 + .seconds(80), reason: "503", at: t0 + .seconds(81)) == .stoppedAnswering(reason: "503"))
        #expect(a.answered(at: t0 + .seconds(82), success: false) == .answeringAgain(after: .seconds(2), failedAttempts: 1))
    }

    @Test("a failure of an attempt sent before FCM's latest answer starts no wait and says nothing")
    func staleFailure() {
        var a = FCMAvailability()
        a.answered(at: t0 + .seconds(5), success: true)
        #expect(a.failedTransiently(since: t0 + .seconds(1), reason: "timed out", at: t0 + .seconds(31)) == nil)
        #expect(a.waiting(at: t0 + .seconds(40)) == nil)
    }
}
