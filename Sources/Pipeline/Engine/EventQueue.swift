import DequeModule
import Kafka
import Synchronization

/// Events admitted by the reader and not yet started, kept as plain values, and the bounded
/// pool of runner tasks that take them in order. The rest of an event begun without a task
/// (``EventProcessor/begin(_:then:)``) that needs one after all goes first.
///
/// With 10,000 events in flight and 1,000 sends allowed, a task per event left 9,000 suspended
/// tasks holding their stacks; here those 9,000 wait as `KafkaMessage`s. Runners start as work
/// arrives, while fewer exist than `runnerLimit()` says (the sends FCM's answer times call for,
/// at most `maxRunners`), and then wait here for more.
///
/// ```swift
/// if queue.push(message) { spawnRunner() }   // the runner loops on `await queue.next()`,
///                                             // and spawns another if `queue.claimRunner()`
/// queue.pushRest { … }                        // ahead of the events waiting
/// queue.close()                               // runners finish their event, then get nil
/// ```
final class EventQueue: Sendable {
    /// What a runner takes.
    enum Item: Sendable {
        /// An admitted event, not started.
        case event(KafkaMessage)
        /// The rest of an event already under way.
        case rest(@Sendable () async -> Void)

        var event: KafkaMessage? {
            if case .event(let message) = self { message } else { nil }
        }
    }

    private struct State {
        var buffer: Deque<Item> = []
        var idle: Deque<CheckedContinuation<Item?, Never>> = []
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
        enqueue(.event(message), first: false) ?? false
    }

    /// Queues the rest of an event under way ahead of the events waiting, or hands it to an
    /// idle runner. Returns nil when the queue is closed (the rest is dropped: its event is not
    /// finished), else whether the caller should start one more runner, as ``push(_:)``.
    func pushRest(_ rest: @escaping @Sendable () async -> Void) -> Bool? {
        enqueue(.rest(rest), first: true)
    }

    private func enqueue(_ item: Item, first: Bool) -> Bool? {
        let limit = currentLimit
        let (runner, spawn) = state.withLock { s -> (CheckedContinuation<Item?, Never>?, Bool?) in
            if s.closed { return (nil, nil) }
            if let runner = s.idle.popFirst() { return (runner, false) }
            if first { s.buffer.prepend(item) } else { s.buffer.append(item) }
            return (nil, Self.countRunner(&s, limit: limit))
        }
        runner?.resume(returning: item)
        return spawn
    }

    /// Asked by a runner that took an event: true when events still wait and fewer runners
    /// exist than `runnerLimit()` says now, so the caller should start one more (the count
    /// already includes it). The limit grows with FCM's answer times while the reader may be
    /// waiting for room and pushing nothing: without this, the events already queued would be
    /// left to the runners started when the limit was lower, for seconds at long answer times
    /// (docs/benchmarks-history.md).
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

    /// The next item for a runner; nil once the queue is closed (the runner then ends).
    func next() async -> Item? {
        if let taken = take() { return taken }
        return await withCheckedContinuation { (runner: CheckedContinuation<Item?, Never>) in
            // A push may have come between the two locks: try again before parking.
            if let taken = take(orPark: runner) { runner.resume(returning: taken) }
        }
    }

    /// The next event, or `.some(nil)` once closed; otherwise nil, after parking `runner` (if
    /// given) in the same lock, so a push cannot slip between the check and the parking.
    private func take(orPark runner: CheckedContinuation<Item?, Never>? = nil) -> Item?? {
        state.withLock { s in
            if let message = s.buffer.popFirst() { return .some(message) }
            if s.closed { return .some(nil) }
            if let runner { s.idle.append(runner) }
            return nil
        }
    }

    /// Items waiting for a runner.
    var count: Int { state.withLock { $0.buffer.count } }

    /// Runners get nil once they ask again; events not yet started, and rests not run, are
    /// dropped (they were never finished, so no commit passes them). Returns how many were
    /// dropped.
    @discardableResult
    func close() -> Int {
        let (idle, dropped) = state.withLock { s -> ([CheckedContinuation<Item?, Never>], Int) in
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
