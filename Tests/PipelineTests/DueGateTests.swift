import Testing

@testable import Pipeline

/// Which held timer records may go (``DueGate``), without I/O.
@Suite("Due gate: held timer records and their releases")
struct DueGateTests {
    func released(_ pairs: [(Int32, Int64)]) -> [DueGate.Released] { pairs.map { DueGate.Released(partition: $0.0, offset: $0.1) } }

    @Test("FIFO releases: nothing before the head's release, then the heads in offset order, per partition; nextWake follows")
    func fifo() {
        var gate = DueGate(window: 8)
        #expect(gate.nextWake == nil && gate.ripe(at: .max).isEmpty)
        for (offset, release) in [(10, 1_000), (11, 1_000), (12, 1_500), (13, 3_000)] as [(Int64, Int64)] {
            #expect(gate.admit(partition: 4, offset: offset, release: release) == .admitted)
        }
        #expect(gate.admit(partition: 9, offset: 0, release: 1_200) == .admitted)
        #expect(gate.nextWake == 1_000 && gate.count == 5)
        #expect(gate.ripe(at: 999).isEmpty)
        #expect(gate.ripe(at: 1_000) == released([(4, 10), (4, 11)]))
        #expect(gate.nextWake == 1_200)
        #expect(gate.ripe(at: 2_000) == released([(4, 12), (9, 0)]))
        #expect(gate.waiting(4) == [DueGate.Entry(offset: 13, release: 3_000)] && gate.waiting(9).isEmpty)
        #expect(gate.nextWake == 3_000)
        #expect(gate.ripe(at: 3_000) == released([(4, 13)]) && gate.nextWake == nil && gate.count == 0)
    }

    @Test("skewed writers: a ripe record behind an unripe head goes at once; the head stays; nextWake is the earliest of all")
    func skewed() {
        var gate = DueGate()
        _ = gate.admit(partition: 0, offset: 1, release: 5_000)  // its writer's clock was ahead
        _ = gate.admit(partition: 0, offset: 2, release: 2_000)
        _ = gate.admit(partition: 0, offset: 3, release: 2_100)
        _ = gate.admit(partition: 0, offset: 4, release: 6_000)
        #expect(gate.nextWake == 2_000)
        #expect(gate.ripe(at: 2_100) == released([(0, 2), (0, 3)]))
        #expect(gate.waiting(0).map(\.offset) == [1, 4] && gate.nextWake == 5_000)
        #expect(gate.ripe(at: 5_500) == released([(0, 1)]))
        #expect(gate.ripe(at: 6_000) == released([(0, 4)]))
    }

    @Test("the window bounds each partition's look-ahead: full refuses until a release makes room; offsets only go forward")
    func window() {
        var gate = DueGate(window: 2)
        #expect(gate.admit(partition: 1, offset: 0, release: 100) == .admitted)
        #expect(!gate.isFull(1))
        #expect(gate.admit(partition: 1, offset: 1, release: 200) == .admitted)
        #expect(gate.isFull(1) && !gate.isFull(2))
        #expect(gate.admit(partition: 1, offset: 2, release: 300) == .full)
        #expect(gate.admit(partition: 2, offset: 0, release: 300) == .admitted, "other partitions are not held")
        #expect(gate.admit(partition: 1, offset: 1, release: 200) == .outOfOrder)
        _ = gate.ripe(at: 100)
        #expect(!gate.isFull(1))
        #expect(gate.admit(partition: 1, offset: 2, release: 300) == .admitted)
        _ = gate.ripe(at: 1_000)
        #expect(gate.admit(partition: 1, offset: 2, release: 300) == .outOfOrder, "read twice, even once released")
    }

    @Test("a revoked partition's waiting records are dropped and counted; after the drop it starts afresh")
    func drop() {
        var gate = DueGate()
        for offset: Int64 in 0..<5 { _ = gate.admit(partition: 7, offset: offset, release: 1_000 + offset) }
        _ = gate.admit(partition: 8, offset: 0, release: 50)
        #expect(gate.drop(partitions: [7, 99]) == 5)
        #expect(gate.waiting(7).isEmpty && gate.count == 1 && gate.nextWake == 50)
        #expect(gate.admit(partition: 7, offset: 2, release: 10) == .admitted, "the next owner reads from the committed offset")
    }
}
