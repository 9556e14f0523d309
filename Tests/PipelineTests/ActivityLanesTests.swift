import Testing

@testable import Pipeline

/// One Live Activity push in flight per activity, in offset order (``ActivityLanes``), without
/// I/O.
@Suite("Live Activity lanes")
struct ActivityLanesTests {
    typealias Lanes = ActivityLanes<String>
    let order = ActivityLaneKey(project: "p", activity: "o-1")
    let other = ActivityLaneKey(project: "p", activity: "o-2")

    func at(_ offset: Int64, partition: Int32 = 0) -> Lanes.Position { Lanes.Position(partition: partition, offset: offset) }

    /// What the actions say, as text: `go u1`, `supersede u2`.
    func said(_ actions: [Lanes.Action]) -> [String] {
        actions.map {
            switch $0 {
            case .go(let item): "go \(item)"
            case .supersede(let item): "supersede \(item)"
            }
        }
    }

    @Test("the first push goes; the next waits and goes when it ends; then the lane is free")
    func oneInFlight() {
        var lanes = Lanes()
        #expect(said(lanes.arrive(order, at: at(1), "u1", replaceable: false)) == ["go u1"])
        #expect(said(lanes.arrive(order, at: at(2), "u2", replaceable: false)) == [])
        #expect(lanes.finish(order) == "u2")
        #expect(lanes.finish(order) == nil)
        #expect(lanes.busy == 0)
        #expect(said(lanes.arrive(order, at: at(3), "u3", replaceable: false)) == ["go u3"])
    }

    @Test("two activities never wait for each other")
    func apart() {
        var lanes = Lanes()
        #expect(said(lanes.arrive(order, at: at(1), "a", replaceable: true)) == ["go a"])
        #expect(said(lanes.arrive(other, at: at(2), "b", replaceable: true)) == ["go b"])
        #expect(lanes.busy == 2)
    }

    @Test("a waiting update without an alert is replaced by a newer one of its partition; alerts, ends and other partitions' stay")
    func replaced() {
        var lanes = Lanes()
        _ = lanes.arrive(order, at: at(1), "in flight", replaceable: true)
        #expect(said(lanes.arrive(order, at: at(2), "u2", replaceable: true)) == [])
        #expect(said(lanes.arrive(order, at: at(3), "u3", replaceable: true)) == ["supersede u2"])
        #expect(said(lanes.arrive(order, at: at(4), "alert", replaceable: false)) == ["supersede u3"])
        #expect(said(lanes.arrive(order, at: at(1, partition: 1), "p1", replaceable: true)) == [])
        #expect(said(lanes.arrive(order, at: at(5), "end", replaceable: false)) == [])
        #expect([lanes.finish(order), lanes.finish(order), lanes.finish(order), lanes.finish(order)] == ["alert", "p1", "end", nil])
    }

    @Test("pushes rendered out of order meet their lane in the order they were read")
    func readOrder() {
        var lanes = Lanes()
        for offset in 1...4 { lanes.admit(at(Int64(offset))) }
        // The second read renders first: it waits for the first ticket.
        #expect(said(lanes.arrive(order, at: at(2), "u2", replaceable: false)) == [])
        #expect(said(lanes.arrive(other, at: at(4), "b4", replaceable: false)) == [])
        #expect(said(lanes.arrive(order, at: at(1), "u1", replaceable: false)) == ["go u1"])
        // u2 is taken once u1 is: it waits behind it. Offset 3 is no push; b4 then goes.
        #expect(said(lanes.pass(at(3))) == ["go b4"])
        #expect(lanes.ticketsOpen == 0)
        #expect(lanes.finish(order) == "u2")
    }

    @Test("another partition's tickets hold nothing back; an event read twice resolves one ticket each")
    func partitionsApart() {
        var lanes = Lanes()
        lanes.admit(at(1, partition: 0))
        lanes.admit(at(1, partition: 1))
        #expect(said(lanes.arrive(order, at: at(1, partition: 1), "p1", replaceable: false)) == ["go p1"])
        lanes.admit(at(5))
        lanes.admit(at(5))
        #expect(said(lanes.pass(at(1))) == [])
        #expect(said(lanes.arrive(other, at: at(5), "x", replaceable: false)) == ["go x"])
        #expect(lanes.ticketsOpen == 1)
        #expect(said(lanes.pass(at(5))) == [])
        #expect(lanes.ticketsOpen == 0)
    }

    @Test("a push older than one of its partition already ahead in its lane (a partition read again) is superseded")
    func stale() {
        var lanes = Lanes()
        _ = lanes.arrive(order, at: at(7), "u7", replaceable: true)
        #expect(said(lanes.arrive(order, at: at(6), "u6", replaceable: true)) == ["supersede u6"])
        #expect(said(lanes.arrive(order, at: at(6, partition: 2), "other partition", replaceable: true)) == [])
        // The same offset again waits its turn.
        #expect(said(lanes.arrive(order, at: at(7), "u7 again", replaceable: false)) == [])
    }

    @Test("min_interval: the lane says how long to stay closed after the push in flight, the next push's own once it goes")
    func pause() {
        var lanes = Lanes()
        _ = lanes.arrive(order, at: at(1), "u1", replaceable: true, pause: .seconds(10))
        #expect(lanes.pause(order) == .seconds(10))
        _ = lanes.arrive(order, at: at(2), "u2", replaceable: true, pause: .seconds(3))
        #expect(lanes.finish(order) == "u2")
        #expect(lanes.pause(order) == .seconds(3))
        #expect(lanes.finish(order) == nil)
        #expect(lanes.pause(order) == nil)
    }
}
