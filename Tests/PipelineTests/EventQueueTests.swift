import Kafka
import Synchronization
import Testing

@testable import Pipeline

@Suite("EventQueue: events waiting as values for a bounded pool of runners")
struct EventQueueTests {
    func message(_ offset: Int64) -> KafkaMessage {
        KafkaMessage(topic: "events", partition: 0, offset: offset, value: Array("{}".utf8))
    }

    @Test("asks for a new runner only while fewer than the maximum exist, and keeps order")
    func boundedRunnersInOrder() async {
        let queue = EventQueue(maxRunners: 2)
        #expect(queue.push(message(0)) == true)
        #expect(queue.push(message(1)) == true)
        #expect(queue.push(message(2)) == false, "two runners exist: the third event waits as a value")
        #expect(queue.push(message(3)) == false)
        #expect(queue.count == 4)
        var taken: [Int64] = []
        for _ in 0..<4 { taken.append(await queue.next()!.event!.offset) }
        #expect(taken == [0, 1, 2, 3])
        #expect(queue.count == 0)
    }

    @Test("a runner that takes an event asks for another while events wait and the limit has grown since they came")
    func runnersFollowAGrowingLimit() async {
        let limit = Mutex(1)
        let queue = EventQueue(maxRunners: 4, runnerLimit: { limit.withLock { $0 } })
        #expect(queue.push(message(0)) == true)
        for i in 1...5 { #expect(queue.push(message(Int64(i))) == false, "the limit is one runner") }
        #expect(await queue.next()?.event?.offset == 0)
        #expect(queue.claimRunner() == false, "one runner exists, as the limit says")
        limit.withLock { $0 = 3 }
        #expect(queue.claimRunner() == true)
        #expect(queue.claimRunner() == true)
        #expect(queue.claimRunner() == false, "three runners now, the limit")
        limit.withLock { $0 = 10 }
        #expect(queue.claimRunner() == true, "up to maxRunners")
        #expect(queue.claimRunner() == false, "maxRunners is 4")
        for _ in 1...5 { _ = await queue.next() }
        #expect(queue.count == 0)
        let idle = EventQueue(maxRunners: 4, runnerLimit: { 4 })
        #expect(idle.push(message(0)) == true)
        #expect(await idle.next()?.event?.offset == 0)
        #expect(idle.claimRunner() == false, "no event waits: no runner for nothing")
    }

    @Test("the rest of an event under way goes ahead of the events waiting; after close it is refused, and dropped if it waited")
    func restsGoFirst() async {
        let queue = EventQueue(maxRunners: 1)
        #expect(queue.push(message(0)) == true)
        #expect(queue.push(message(1)) == false)
        let ran = Mutex<[String]>([])
        #expect(queue.pushRest { ran.withLock { $0.append("rest") } } == false, "the one runner exists")
        guard case .rest(let rest)? = await queue.next() else {
            Issue.record("the rest should come first")
            return
        }
        await rest()
        #expect(ran.withLock { $0 } == ["rest"])
        #expect(await queue.next()?.event?.offset == 0)
        #expect(queue.pushRest {} == false)
        #expect(queue.close() == 2, "the event and the rest waiting are dropped")
        #expect(queue.pushRest {} == nil, "closed: refused, so its event is known unfinished")
    }

    @Test("an idle runner gets the next event handed over, and no new runner is asked for")
    func idleRunnerTakesThePush() async throws {
        let queue = EventQueue(maxRunners: 1)
        #expect(queue.push(message(0)))
        #expect(await queue.next()?.event?.offset == 0)
        let runner = Task { await queue.next()?.event?.offset }
        // Wait until the runner is parked: a push before that lands in the buffer instead,
        // which the runner would take just the same; either way it must get offset 1.
        try await Task.sleep(for: .milliseconds(50))
        #expect(queue.push(message(1)) == false, "the maximum of one runner exists")
        #expect(await runner.value == 1)
        #expect(queue.count == 0)
    }

    @Test("close wakes idle runners with nil, drops events not started, and refuses new ones")
    func close() async throws {
        let queue = EventQueue(maxRunners: 1)
        let idle = Task { await queue.next() }
        try await Task.sleep(for: .milliseconds(50))
        #expect(queue.close() == 0)
        #expect(await idle.value == nil)

        let other = EventQueue(maxRunners: 1)
        other.push(message(0))
        other.push(message(1))
        #expect(other.close() == 2, "both were never started: they stay unfinished, so no commit passes them")
        #expect(await other.next() == nil)
        #expect(other.push(message(2)) == false)
        #expect(other.count == 0)
    }

    @Test("many runners and many events: each event is taken exactly once")
    func eachEventOnce() async {
        let queue = EventQueue(maxRunners: 8)
        let count = 5_000
        let taken = await withTaskGroup(of: [Int64].self) { group in
            var runners = 0
            for i in 0..<count where queue.push(message(Int64(i))) {
                runners += 1
                group.addTask {
                    var mine: [Int64] = []
                    while let m = await queue.next() {
                        mine.append(m.event!.offset)
                        if mine.count % 100 == 0 { await Task.yield() }
                    }
                    return mine
                }
            }
            #expect(runners == 8)
            // Close once everything has been taken, so runners end.
            while queue.count > 0 { await Task.yield() }
            queue.close()
            return await group.reduce(into: [Int64]()) { $0 += $1 }
        }
        #expect(taken.count == count)
        #expect(Set(taken).count == count)
    }
}
