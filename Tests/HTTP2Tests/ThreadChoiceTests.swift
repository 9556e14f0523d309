import Testing

@testable import HTTP2

@Suite("ThreadChoice: which of the client's threads takes a request, without I/O")
struct ThreadChoiceTests {
    typealias Load = ThreadChoice.Load

    static func choose(_ loads: [(Int, Int)]) -> Int {
        ThreadChoice.choose(loads.map { Load(connections: $0.0, requests: $0.1) }, streamsPerConnection: 100)
    }

    @Test("light traffic stays on the first thread and its one connection")
    func lightTraffic() {
        #expect(Self.choose([(0, 0), (0, 0)]) == 0, "nothing open: the first thread opens a connection")
        #expect(Self.choose([(0, 1), (0, 0)]) == 0, "its connection is on the way: no second one on the other thread")
        #expect(Self.choose([(1, 99), (0, 0)]) == 0)
    }

    @Test("every stream busy: the thread with the fewest connections, then the fewest requests, opens one")
    func allBusy() {
        #expect(Self.choose([(1, 100), (0, 0)]) == 1)
        #expect(Self.choose([(2, 200), (1, 100)]) == 1)
        #expect(Self.choose([(2, 230), (2, 210)]) == 1)
        #expect(Self.choose([(2, 210), (2, 210)]) == 0, "the first of equals")
    }

    /// The case the earlier rule (the first thread with a free stream) got wrong: the first
    /// thread kept the traffic and the second one's connections stood idle.
    @Test("of the threads with a free stream, the least busy takes it, not the first")
    func leastBusy() {
        #expect(Self.choose([(31, 2_900), (17, 200)]) == 1)
        #expect(Self.choose([(17, 200), (31, 2_900)]) == 0)
        #expect(Self.choose([(31, 100), (17, 200)]) == 0)
        #expect(Self.choose([(10, 500), (1, 100)]) == 0, "the second has no free stream")
    }

    @Test("threads with unequal connections share the requests evenly while both have room", arguments: [1_000, 1_400])
    func sharesEvenly(total: Int) {
        var loads = [Load(connections: 10, requests: 0), Load(connections: 6, requests: 0)]
        for _ in 0..<total {
            loads[ThreadChoice.choose(loads, streamsPerConnection: 100)].requests += 1
        }
        #expect(loads[0].requests + loads[1].requests == total)
        // 1,000: 500 each; 1,400: the second's 600 streams fill, the first takes the rest.
        #expect(loads[1].requests == min(total / 2, 600), "\(loads)")
    }
}
