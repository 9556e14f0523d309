import Testing

@testable import HTTP2

/// When the nghttp2 engine opens another connection to a server, without I/O.
@Suite("ConnectionDemand: another connection only when waiting requests press")
struct ConnectionDemandTests {
    let demand = ConnectionDemand(streamsPerConnection: 100, maxConnections: 4)
    let busy = ConnectionDemand.Server(opening: false, allGoingAway: false)

    @Test("the first request to a server with no connection that takes streams opens one at once")
    func firstRequest() {
        let none = ConnectionDemand.Server(opening: false, allGoingAway: true)
        #expect(demand.shouldOpen(open: 0, server: none, waiting: 1, waitingFor: .zero))
        #expect(demand.shouldOpen(open: 2, server: none, waiting: 1, waitingFor: .zero), "its connections all going away")
    }

    @Test("busy connections: a tenth of a connection's streams waiting, or one request waiting 100 ms, opens another")
    func pressure() {
        #expect(!demand.shouldOpen(open: 1, server: busy, waiting: 9, waitingFor: .milliseconds(99)))
        #expect(demand.shouldOpen(open: 1, server: busy, waiting: 10, waitingFor: .zero))
        #expect(demand.shouldOpen(open: 1, server: busy, waiting: 1, waitingFor: .milliseconds(100)))
        #expect(ConnectionDemand(streamsPerConnection: 5, maxConnections: 4).pressingCount == 1)
    }

    @Test("never with nothing waiting, with one already on its way, or at maxConnections")
    func bounds() {
        #expect(!demand.shouldOpen(open: 1, server: busy, waiting: 0, waitingFor: .seconds(5)))
        let opening = ConnectionDemand.Server(opening: true, allGoingAway: false)
        #expect(!demand.shouldOpen(open: 1, server: opening, waiting: 500, waitingFor: .seconds(5)))
        #expect(!demand.shouldOpen(open: 4, server: busy, waiting: 500, waitingFor: .seconds(5)))
        #expect(!demand.shouldOpen(open: 4, server: .init(opening: false, allGoingAway: true), waiting: 1, waitingFor: .zero))
    }
}
