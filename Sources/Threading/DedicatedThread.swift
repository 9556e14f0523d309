import Foundation

/// Runs blocking C loops (`rd_kafka_consumer_poll`, libcurl's `poll(2)` loop, …) and blocking waits on
/// their own OS threads, never on the pool Swift's tasks run on (``run(_:)`` says why).
public enum DedicatedThread {
    /// Starts `body` on a new thread named `name`. `body` should return when asked to stop.
    ///
    /// `name` is also the OS thread's name (its first 15 bytes, Linux's limit), as `top -H`,
    /// `perf` and gdb show it: Foundation's `Thread.name` does not reach the OS thread on Linux,
    /// which keeps the name of the thread that started it (e.g. a pool thread's).
    /// - Returns: a semaphore signalled once when `body` has returned.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let osName = String(decoding: name.utf8.prefix(15), as: UTF8.self)
        let thread = Thread {
            Self.nameThisThread(osName)
            body()
            done.signal()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
        return done
    }

    /// Sets the calling OS thread's name through `/proc/thread-self/comm` (what
    /// `pthread_setname_np` does, which Swift's Glibc module does not expose).
    private static func nameThisThread(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY)
        guard fd >= 0 else { return }
        _ = name.withCString { write(fd, $0, strlen($0)) }
        close(fd)
    }

    /// Waits, without blocking the task pool (``run(_:)``), until a thread started by
    /// ``start(name:_:)`` has finished. Several callers may wait for the same thread.
    public static func join(_ done: DispatchSemaphore) async {
        await run {
            done.wait()
            done.signal()  // let the next waiter through
        }
    }

    /// Runs a blocking call (`rd_kafka_flush`, a semaphore wait) on a thread of its own and
    /// awaits its result.
    ///
    /// Not on `DispatchQueue.global()`: on Linux, Swift's tasks run on that same pool. It starts
    /// with one thread per CPU and, while its threads are blocked, grows by about one a second
    /// to a cap near 64. Measured on 2 CPUs: with 4 threads blocked a new task waited 1 s, with
    /// 16 blocked 13 s, with 70 it never ran. Joins of threads that themselves wait for a task
    /// (a consumer thread running a rebalance handler), or producers flushing toward a broker
    /// that is down, then stall every task and timer in the process, or hang it. A thread costs
    /// tens of microseconds, and these calls are rare (close, flush).
    public static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (c: CheckedContinuation<T, Never>) in
            Thread.detachNewThread { c.resume(returning: body()) }
        }
    }

    /// Runs an async closure from a dedicated (non-cooperative) thread and blocks that thread
    /// until it finishes. Never call it from the cooperative pool.
    public static func runBlocking(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await body()
            done.signal()
        }
        done.wait()
    }
}

extension Duration {
    /// Whole milliseconds, as C APIs take them.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
