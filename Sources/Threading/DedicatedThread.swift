import Foundation

/// Runs blocking C loops (`rd_kafka_consumer_poll`, `curl_multi_poll`, …) on their own OS
/// threads, never on Swift's cooperative pool.
public enum DedicatedThread {
    /// Starts `body` on a new thread named `name`. `body` should return when asked to stop.
    /// - Returns: a semaphore signalled once when `body` has returned.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            body()
            done.signal()
        }
        thread.name = name
        thread.stackSize = 1 << 20
        thread.start()
        return done
    }

    /// Waits, without blocking the cooperative pool, until a thread started by
    /// ``start(name:_:)`` has finished. Several callers may wait for the same thread.
    public static func join(_ done: DispatchSemaphore) async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                done.wait()
                done.signal()  // let the next waiter through
                c.resume()
            }
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
