import Testing

@testable import HTTP2

/// The rule that judges a connection dead, without I/O: a request has waited the liveness
/// timeout on a connection that received nothing for as long.
@Suite("ConnectionLiveness: silence with a request waiting")
struct ConnectionLivenessTests {
    typealias Connection = ConnectionLiveness.Connection
    let liveness = ConnectionLiveness(silence: .seconds(10))

    @Test("silent for the timeout with a request waiting as long: dead; a moment short of either: not")
    func silenceWithRequestWaiting() {
        let connections = [
            Connection(socket: 5, silentFor: .seconds(10), oldestRequest: .seconds(10)),
            Connection(socket: 6, silentFor: .milliseconds(9_999), oldestRequest: .seconds(30)),
            Connection(socket: 7, silentFor: .seconds(30), oldestRequest: .milliseconds(9_999)),
        ]
        #expect(liveness.dead(connections) == [5])
    }

    @Test("an idle connection is never judged, however long its silence")
    func idle() {
        #expect(liveness.dead([Connection(socket: 5, silentFor: .seconds(3_600), oldestRequest: nil)]).isEmpty)
        #expect(liveness.anySilent([.seconds(3_600)]))
    }

    @Test("the requests are looked at only once a connection has been silent for the timeout")
    func anySilent() {
        #expect(!liveness.anySilent([.zero, .milliseconds(9_999)]))
        #expect(liveness.anySilent([.zero, .seconds(10)]))
        #expect(!liveness.anySilent([]))
    }

    @Test("a request that timed out on a connection silent since it went names that connection dead; one that heard from it since does not")
    func timedOut() {
        #expect(ConnectionLiveness.diedUnder(requestThatWaited: .seconds(1), silentFor: .seconds(1)))
        #expect(ConnectionLiveness.diedUnder(requestThatWaited: .seconds(1), silentFor: .seconds(40)))
        #expect(!ConnectionLiveness.diedUnder(requestThatWaited: .seconds(1), silentFor: .milliseconds(200)))
    }
}
