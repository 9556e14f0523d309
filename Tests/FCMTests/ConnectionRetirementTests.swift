import Testing

@testable import FCMEmulator

/// The emulator's graceful retirement of a connection (RFC 9113 §6.8), without I/O.
/// `FCMClientFaultTests.connectionFaults(.gracefulGoAway)` holds it end to end.
@Suite("ConnectionRetirement: a retired connection answers what it promised and nothing else, once")
struct ConnectionRetirementTests {
    @Test("a connection retires once, however many answers ask: one announcing GOAWAY, one final GOAWAY")
    func retiresOnce() {
        var r = ConnectionRetirement()
        for id in [1, 3, 5] { _ = r.requestBegan(streamID: id) }
        let first = r.retire()
        let second = r.retire()
        #expect(first && !second, "a second answer asking for it starts nothing")
        let drainedEarly = r.requestEnded()
        let third = r.retire()
        #expect(!drainedEarly && !third)
        let final = r.sendFinal()
        #expect(final?.lastStreamID == 5)
        #expect(final?.drained == false, "two requests are still open")
        let again = r.sendFinal()
        let fourth = r.retire()
        #expect(again == nil && !fourth, "one final GOAWAY")
    }

    @Test("the final GOAWAY names the highest stream opened, answered or not; a stream above it is never processed")
    func lastStream() {
        var r = ConnectionRetirement()
        _ = r.requestBegan(streamID: 1)
        _ = r.requestBegan(streamID: 3)
        _ = r.requestEnded()
        _ = r.requestEnded()
        let five = r.requestBegan(streamID: 5)  // opened just before the announcement
        _ = r.retire()
        let seven = r.requestBegan(streamID: 7)  // opened before the client read the announcement
        #expect(five && seven)
        let final = r.sendFinal()
        #expect(final?.lastStreamID == 7 && r.lastStreamID == 7)
        let nine = r.requestBegan(streamID: 9)
        #expect(!nine, "above the last stream: the client takes it as unprocessed and sends it again")
        #expect(r.open == 2, "the refused stream is not counted")
        #expect(r.highestStreamID == 7)
    }

    @Test("the connection is drained only once every request up to the last stream is answered")
    func drainsWhenAnswered() {
        var r = ConnectionRetirement()
        _ = r.requestBegan(streamID: 1)
        _ = r.requestBegan(streamID: 3)
        _ = r.retire()
        let beforeFinal = r.requestEnded()
        #expect(!beforeFinal, "not before the final GOAWAY")
        let final = r.sendFinal()
        #expect(final?.drained == false)
        let lastAnswer = r.requestEnded()
        #expect(lastAnswer, "the last answer is out: drained, the close follows")
        #expect(r.phase == .drained)
        let drainedAgain = r.requestEnded()
        #expect(!drainedAgain, "drained once")
        let finalAgain = r.sendFinal()
        let retireAgain = r.retire()
        let cut = r.close()
        #expect(finalAgain == nil && !retireAgain, "no GOAWAY after the drain")
        #expect(!cut, "the deadline does not cut a drained connection")
        let late = r.requestBegan(streamID: 5)
        #expect(!late)
    }

    @Test("with nothing open, the final GOAWAY drains the connection")
    func drainedAtFinal() {
        var r = ConnectionRetirement()
        _ = r.requestBegan(streamID: 1)
        let serving = r.requestEnded()
        #expect(!serving, "serving: an answer closes nothing")
        _ = r.retire()
        let final = r.sendFinal()
        #expect(final?.lastStreamID == 1 && final?.drained == true)
    }

    @Test("a connection closed another way (dropped, or past the deadline) retires no more")
    func closedOtherwise() {
        var r = ConnectionRetirement()
        _ = r.requestBegan(streamID: 1)
        _ = r.retire()
        let first = r.close()
        let second = r.close()
        #expect(first && !second)
        let final = r.sendFinal()
        let ended = r.requestEnded()
        #expect(final == nil && !ended)
    }

    @Test("HTTP/1.1 requests have no stream: counted, never refused")
    func http1() {
        var r = ConnectionRetirement()
        let began = r.requestBegan(streamID: nil)
        #expect(began && r.open == 1 && r.highestStreamID == 0)
    }
}
