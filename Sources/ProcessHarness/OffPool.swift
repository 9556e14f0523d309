import Foundation

/// Runs blocking work (starting a server and waiting for its port, a child process such as
/// openssl or tansu's CLI) on a thread of its own and awaits it.
///
/// Every test in the process shares Swift's cooperative pool, which has one thread per CPU (2 on
/// the CI machine). A test that blocks one of them for a second stalls every other test's
/// timers for that second, and tests that measure time (retry budgets, idle timeouts) then
/// see time pass that they never had.
public func offPool<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
    }
}
