import Foundation
import Synchronization
import TestSupport
import Testing
import Threading

@Suite("Dedicated threads")
struct DedicatedThreadTests {
    /// More blocking waits than the pool behind `DispatchQueue.global()` ever grows to. On Linux
    /// Swift's tasks run on that same pool (one per QoS): it starts at the CPU count and grows by
    /// about one thread a second while its threads are blocked, to a cap near 64. Measured here
    /// (2 CPUs): with 4 threads blocked a new task waited 1 s, with 16 blocked 13 s, with 70 it
    /// never ran.
    static let manyWaits = 128
    // The deadlines below are long: at the start of a full run, CPU-bound tests keep the pool
    // (2 threads here) busy for half a minute, and the tasks here start only after them.

    /// The shape of a hang CI hit: many closes at once (a parallel test run), each joining a
    /// thread that itself waits for a task or for pool work (a consumer thread running a
    /// rebalance handler). When the joins waited on the pool, they took every thread of it, the
    /// work never ran, and nothing finished. The test waits with semaphores on threads of its
    /// own (`offPool`), because `Task.sleep` on a starved pool runs late too. With joins that
    /// block the pool, the whole test process hangs here (nothing can even report); the
    /// watchdog in scripts/test.sh names this test then.
    @Test("many joins at once, of threads that wait for DispatchQueue.global() work, all finish")
    func joinsDoNotStarveTheGlobalQueue() async throws {
        let count = Self.manyWaits
        let work = (0..<count).map { _ in DispatchSemaphore(value: 0) }
        let threads = work.map { ran in DedicatedThread.start(name: "test.waits-for-pool") { ran.wait() } }
        let joined = DispatchSemaphore(value: 0)
        for done in threads {
            Task {
                await DedicatedThread.join(done)
                joined.signal()
            }
        }
        try await offPool { _ = usleep(300_000) }  // the joins are waiting now
        for ran in work { DispatchQueue.global().async { ran.signal() } }

        let finished = try await offPool {
            let deadline = DispatchTime.now() + .seconds(120)
            return (0..<count).filter { _ in joined.wait(timeout: deadline) == .success }.count
        }
        #expect(finished == count, "joins finished")
        for ran in work { ran.signal() }  // on failure, let the stuck threads go
    }

    @Test("more blocking calls through run than the pool ever has threads all run at once")
    func runDoesNotHoldThePool() async throws {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<Self.manyWaits {
            Task {
                await DedicatedThread.run {
                    entered.signal()
                    release.wait()
                }
            }
        }
        let running = try await offPool {
            let deadline = DispatchTime.now() + .seconds(120)
            return (0..<Self.manyWaits).filter { _ in entered.wait(timeout: deadline) == .success }.count
        }
        for _ in 0..<Self.manyWaits { release.signal() }
        #expect(running == Self.manyWaits, "blocking calls running at once")
    }

    @Test("the OS thread carries the name (15 bytes of it), for top -H, perf and gdb")
    func osThreadName() async throws {
        let seen = Mutex<[String]>([])
        for name in ["pb.kafka.poll", "a-name-longer-than-fifteen"] {
            let done = DedicatedThread.start(name: name) {
                let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                seen.withLock { $0.append(comm.trimmingCharacters(in: .newlines)) }
            }
            await DedicatedThread.join(done)
        }
        #expect(seen.withLock { $0 } == ["pb.kafka.poll", "a-name-longer-t"])
    }

    @Test("run returns the blocking call's result")
    func runReturnsTheResult() async {
        #expect(await DedicatedThread.run { 6 * 7 } == 42)
    }
}
