import Synchronization
import Testing

@testable import FCM

/// ``SendGate``'s room for sends that do not queue (``SendGate/tryAcquire()``): who is told of a
/// free slot, in what order, and what happens to room one of them no longer wants. No I/O: slots
/// are taken and released by the test.
@Suite("SendGate: room for sends begun without a task, without I/O")
struct SendGateTests {
    /// A gate whose limit stays at `slots` (floor and ceiling), with `slots` sends in flight.
    static func fullGate(slots: Int) -> SendGate {
        var parameters = ConcurrencyLimit.Parameters()
        parameters.floor = slots
        parameters.ceiling = slots
        let gate = SendGate(concurrency: parameters)
        for _ in 0..<slots { _ = gate.tryAcquire() }
        return gate
    }

    /// Who was told of room, in order.
    final class Told: Sendable {
        private let names = Mutex<[String]>([])
        var all: [String] { names.withLock { $0 } }

        /// A ``SendGate/whenRoom(_:)`` action that records `name` and answers `wants`.
        func action(_ name: String, wants: Bool = true) -> @Sendable () -> Bool {
            { [self] in
                names.withLock { $0.append(name) }
                return wants
            }
        }
    }

    @Test("with room, the action runs at once; without, when a slot is freed, one action per slot, first come first")
    func firstComeFirst() {
        let told = Told()
        let gate = Self.fullGate(slots: 2)
        for name in ["a", "b", "c"] { gate.whenRoom(told.action(name)) }
        #expect(told.all.isEmpty, "no slot free: nobody told")
        #expect(gate.tryAcquire() == .failure(.full))

        gate.release(answerTime: .milliseconds(10))
        #expect(told.all == ["a"], "one slot freed: the first to ask is told")
        #expect(gate.tryAcquire() == .success(()), "and the slot is there for it")

        gate.release(answerTime: .milliseconds(10))
        gate.release(answerTime: .milliseconds(10))
        #expect(told.all == ["a", "b", "c"], "two freed: the next two")

        gate.whenRoom(told.action("d"))
        #expect(told.all == ["a", "b", "c", "d"], "room now: told at once")
    }

    @Test("an action that no longer wants a slot passes the room to the next, so room is never left while others wait for it")
    func declinedRoomPasses() {
        let told = Told()
        let gate = Self.fullGate(slots: 1)
        gate.whenRoom(told.action("gone", wants: false))
        gate.whenRoom(told.action("also gone", wants: false))
        gate.whenRoom(told.action("wants"))
        gate.whenRoom(told.action("later"))

        gate.release(answerTime: .milliseconds(10))
        #expect(told.all == ["gone", "also gone", "wants"], "the declined room went on to the first that wants it, and no further")
        #expect(gate.tryAcquire() == .success(()))
        gate.release(answerTime: .milliseconds(10))
        #expect(told.all.last == "later")
    }

    @Test("a send that waits for room in a task (waitForRoom) takes its turn among the actions, in the order they asked")
    func tasksAndActionsShareTheLine() async {
        let told = Told()
        let gate = Self.fullGate(slots: 1)
        gate.whenRoom(told.action("first"))
        let waiting = Task {
            await gate.waitForRoom()
            _ = told.action("task")()
        }
        // The task asks after "first": wait until it is in line (no slot frees meanwhile).
        while gate.roomWaitersCount < 2 { await Task.yield() }
        gate.whenRoom(told.action("third"))

        gate.release(answerTime: .milliseconds(10))
        #expect(told.all == ["first"])
        _ = gate.tryAcquire()
        gate.release(answerTime: .milliseconds(10))
        await waiting.value
        #expect(told.all == ["first", "task"])
        _ = gate.tryAcquire()
        gate.release(answerTime: .milliseconds(10))
        #expect(told.all == ["first", "task", "third"])
    }

    @Test("a cancelled waitForRoom leaves the line: the room it would have had goes to the next")
    func cancelledWaiterLeaves() async {
        let told = Told()
        let gate = Self.fullGate(slots: 1)
        let waiting = Task { await gate.waitForRoom() }
        while gate.roomWaitersCount < 1 { await Task.yield() }
        gate.whenRoom(told.action("next"))
        waiting.cancel()
        await waiting.value
        #expect(gate.roomWaitersCount == 1)
        gate.release(answerTime: .milliseconds(10))
        #expect(told.all == ["next"])
    }
}

extension Result<Void, SendGate.Refusal> {
    static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs, rhs) {
        case (.success, .success): true
        case (.failure(let a), .failure(let b)): a == b
        default: false
        }
    }
}
