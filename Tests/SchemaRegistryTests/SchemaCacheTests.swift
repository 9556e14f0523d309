import RecordDecoding
import Synchronization
import TestSupport
import Testing

@testable import SchemaRegistry

@Suite struct SchemaCacheTests {
    @Test func concurrentLookupsOfOneIDLoadOnce() async throws {
        let cache = SchemaCache()
        let loads = LoadCount()
        let gate = AsyncGate()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<50 {
                group.addTask { @Sendable in
                    let schema = try await cache.schema(7) { @Sendable () async throws(SchemaLookupError) -> WriterSchema in
                        loads.add()
                        await gate.wait()
                        return .json
                    }
                    #expect(schema.kind == .json)
                }
            }
            // Every task reaches the cache (one loads, 49 wait for it) before the load ends.
            #expect(await eventually { cache.waiting(for: 7) == 49 })
            await gate.open()
            try await group.waitForAll()
        }
        #expect(loads.value == 1)
        #expect(cache.count == 1)
    }

    @Test func aPermanentFailureIsKeptForItsLifetimeThenAskedAgain() async throws {
        let clock = TestClock()
        let cache = SchemaCache(failureLifetime: .seconds(60), now: clock.now)
        let loads = LoadCount()
        let load: SchemaCache.Load = { @Sendable () async throws(SchemaLookupError) -> WriterSchema in
            loads.add()
            throw .notFound(id: 9)
        }
        for _ in 0..<3 {
            await #expect(throws: SchemaLookupError.notFound(id: 9)) { try await cache.schema(9, load: load) }
        }
        #expect(loads.value == 1)
        clock.advance(by: .seconds(59))
        await #expect(throws: SchemaLookupError.notFound(id: 9)) { try await cache.schema(9, load: load) }
        #expect(loads.value == 1, "still kept a second before its lifetime ends")
        clock.advance(by: .seconds(1))
        await #expect(throws: SchemaLookupError.notFound(id: 9)) { try await cache.schema(9, load: load) }
        #expect(loads.value == 2)
    }

    @Test func aCancelledLoaderHandsTheLoadToAWaiter() async throws {
        let cache = SchemaCache()
        let loads = LoadCount()
        let first = Task {
            try await cache.schema(3) { () async throws(SchemaLookupError) -> WriterSchema in
                loads.add()
                do { try await Task.sleep(for: .seconds(60)) } catch { throw .cancelled }
                return .json
            }
        }
        #expect(await eventually { loads.value == 1 })
        let second = Task {
            try await cache.schema(3) { () async throws(SchemaLookupError) -> WriterSchema in
                loads.add()
                return .json
            }
        }
        #expect(await eventually { cache.waiting(for: 3) == 1 })
        first.cancel()
        await #expect(throws: SchemaLookupError.cancelled) { try await first.value }
        #expect(try await second.value.kind == .json)
        #expect(loads.value == 2)
    }

    @Test func aCancelledWaiterLeavesAtOnce() async throws {
        let cache = SchemaCache()
        let gate = AsyncGate()
        let loader = Task {
            try await cache.schema(4) { () async throws(SchemaLookupError) -> WriterSchema in
                await gate.wait()
                return .json
            }
        }
        #expect(await eventually { cache.waiting(for: 4) == 0 })
        let waiter = Task {
            try await cache.schema(4) { () async throws(SchemaLookupError) -> WriterSchema in .json }
        }
        #expect(await eventually { cache.waiting(for: 4) == 1 })
        waiter.cancel()
        await #expect(throws: SchemaLookupError.cancelled) { try await waiter.value }
        await gate.open()
        #expect(try await loader.value.kind == .json)
    }
}

/// A clock the test moves by hand.
private final class TestClock: Sendable {
    private let instant = Mutex(ContinuousClock.now)
    var now: @Sendable () -> ContinuousClock.Instant { { self.instant.withLock { $0 } } }
    func advance(by duration: Duration) { instant.withLock { $0 += duration } }
}

/// How many times a load ran.
private final class LoadCount: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// Holds tasks until opened.
private actor AsyncGate {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for w in waiting { w.resume() }
        waiting = []
    }
}
