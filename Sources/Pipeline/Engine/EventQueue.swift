import DequeModule
import Kafka
import Synchronization

/// Events admitted by the reader and not yet started, kept as plain values, and the bounded
/// pool of runner tasks that take them in order.
///
/// With 10,000 events in flight and 1,000 sends allowed, a task per event left 9,000 suspended
/// tasks holding their stacks; here those 9,000 wait as `KafkaMessage`s. Runners start as work
/// arrives, while fewer exist than `runnerLimit()` says (the sends FCM's answer times call for,
/// at most `maxRunners`), and then wait here for more.
///
/// ```swift
/// if queue.push(message) { spawnRunner() }   // the runner loops on `await queue.next()`,
///                                             // and spawns another if `queue.claimRunner()`
/// queue.close()                               // runners finish their event, then get nil
/// ```
final class EventQueue: Sendable {
    private struct State {
        var buffer: Deque<KafkaMessage> = []
        var idle: Deque<CheckedContinuation<KafkaMessage?, Never>> = []
        var runners = 0
        var closed = false
    }

    let maxRunners: Int
    private let runnerLimit: @Sendable () -> Int
    private let state = Mutex(State())

    /// - Parameters:
    ///   - maxRunners: runners at most, ever.
    ///   - runnerLimit: runners wanted now (read as events arrive); runners beyond it are not
    ///     started, and those already running stay.
    init(maxRunners: Int, runnerLimit: @escaping @Sendable () -> Int = { .max }) {
        self.maxRunners = max(1, maxRunners)
        self.runnerLimit = runnerLimit
    }

    /// Queues `message`, or hands it to an idle runner. Returns true when the caller should
    /// start one more runner (none idle, and fewer than the limit exist); the count already
    /// includes it.
    @discardableResult
    func push(_ message: KafkaMessage) -> Bool {
        let limit = currentLimit
        let (runner, spawn) = state.withLock { s -> (CheckedContinuation<KafkaMessage?, Never>?, Bool) in
            if s.closed { return (nil, false) }
            if let runner = s.idle.popFirst() { return (runner, false) }
            s.buffer.append(message)
            return (nil, Self.countRunner(&s, limit: limit))
        }
        runner?.resume(returning: message)
        return spawn
    }

    /// Asked by a runner that took an event: true when events still wait and fewer runners
    /// exist than `runnerLimit()` says now, so the caller should start one more (the count
    /// already includes it). The limit grows with FCM's answer times while the reader may be
    /// waiting for room and pushing nothing: without this, the events already queued would be
    /// left to the runners started when the limit was lower (at 300 ms answer times, 1,000 sends
    /// in flight for 3 s of a 5,000 limit; docs/benchmarks.md).
    func claimRunner() -> Bool {
        let limit = currentLimit
        return state.withLock { s in
            guard !s.closed, !s.buffer.isEmpty else { return false }
            return Self.countRunner(&s, limit: limit)
        }
    }

    /// Runners wanted now, within `maxRunners`.
    private var currentLimit: Int { min(maxRunners, max(1, runnerLimit())) }

    /// Counts one more runner if fewer than `limit` exist; whether it did.
    private static func countRunner(_ s: inout State, limit: Int) -> Bool {
        guard s.runners < limit else { return false }
        s.runners += 1
        return true
    }

    /// The next event for a runner; nil once the queue is closed (the runner then ends).
    func next() async -> KafkaMessage? {
        if let taken = take() { return taken }
        return await withCheckedContinuation { (runner: CheckedContinuation<KafkaMessage?, Never>) in
            // A push may have come between the two locks: try again before parking.
            if let taken = take(orPark: runner) { runner.resume(returning: taken) }
        }
    }

    /// The next event, or `.some(nil)` once closed; otherwise nil, after parking `runner` (if
    /// given) in the same lock, so a push cannot slip between the check and the parking.
    private func take(orPark runner: CheckedContinuation<KafkaMessage?, Never>? = nil) -> KafkaMessage?? {
        state.withLock { s in
            if let message = s.buffer.popFirst() { return .some(message) }
            if s.closed { return .some(nil) }
            if let runner { s.idle.append(runner) }
            return nil
        }
    }

    /// Events waiting for a runner.
    var count: Int { state.withLock { $0.buffer.count } }

    /// Runners get nil once they ask again; events not yet started are dropped (they were never
    /// finished, so no commit passes them). Returns how many were dropped.
    @discardableResult
    func close() -> Int {
        let (idle, dropped) = state.withLock { s -> ([CheckedContinuation<KafkaMessage?, Never>], Int) in
            s.closed = true
            let idle = Array(s.idle)
            let dropped = s.buffer.count
            s.idle.removeAll()
            s.buffer.removeAll()
            return (idle, dropped)
        }
        for runner in idle { runner.resume(returning: nil) }
        return dropped
    }
}
