import Foundation

/// Runs one blocking loop on its own OS thread, never on Swift's cooperative pool.
enum DedicatedThread {
    /// Starts `body` on a new thread named `name`. `body` should return when asked to stop.
    /// - Returns: a semaphore signalled when `body` has returned.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
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

    /// Runs an async closure from a dedicated (non-cooperative) thread and blocks that thread
    /// until it finishes.
    static func runBlocking(_ body: @escaping @Sendable () async -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task {
            await body()
            done.signal()
        }
        done.wait()
    }
}
