import DequeModule
import Foundation

/// A bounded FIFO between the consumer's poll thread (which blocks while it is full) and one
/// async reader.
///
/// `@unchecked Sendable`: all mutable state is guarded by `condition`'s lock; continuations are
/// resumed after the lock is released.
final class MessageChannel: @unchecked Sendable {
    private typealias Waiter = CheckedContinuation<Result<KafkaMessage?, KafkaError>, Never>

    private let condition = NSCondition()
    private var buffer = Deque<KafkaMessage>()
    private var waiter: Waiter?
    private var finished = false
    private var failure: KafkaError?
    /// Messages accepted since the start, including those handed straight to the reader.
    private var pushed = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    /// Appends `batch`, waiting while the buffer is full. Returns early (dropping nothing that
    /// was accepted) when `shouldStop()` turns true; the rest of the batch is discarded, which is
    /// safe because uncommitted records are read again.
    func push(_ batch: [KafkaMessage], shouldStop: () -> Bool) {
        var pending = batch[...]
        while !pending.isEmpty {
            condition.lock()
            while buffer.count >= capacity && !finished && !shouldStop() {
                _ = condition.wait(until: Date(timeIntervalSinceNow: 0.1))
            }
            if finished || shouldStop() {
                condition.unlock()
                return
            }
            var handOff: (Waiter, KafkaMessage)?
            if let w = waiter, buffer.isEmpty {
                waiter = nil
                handOff = (w, pending.removeFirst())
            }
            let room = capacity - buffer.count
            pushed += (handOff == nil ? 0 : 1) + min(room, pending.count)
            buffer.append(contentsOf: pending.prefix(room))
            pending = pending.dropFirst(room)
            condition.unlock()
            if let (w, message) = handOff { w.resume(returning: .success(message)) }
        }
    }

    /// The next message, or nil once the channel is finished and drained.
    func next() async throws(KafkaError) -> KafkaMessage? {
        // Most calls find a message waiting: take it without a continuation.
        if let ready = take() { return try ready.get() }
        let result: Result<KafkaMessage?, KafkaError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Waiter) in
                // A push may have come between the two locks: try again before parking.
                if let ready = take(orPark: continuation) { continuation.resume(returning: ready) }
            }
        } onCancel: {
            condition.lock()
            let w = waiter
            waiter = nil
            condition.unlock()
            w?.resume(returning: .success(nil))
        }
        return try result.get()
    }

    /// The next message, or the end (nil, or the failure) once finished or cancelled;
    /// otherwise nil, after parking `reader` (if given) in the same lock, so a push cannot slip
    /// between the check and the parking. The caller resumes `reader` with a non-nil result.
    private func take(orPark reader: Waiter? = nil) -> Result<KafkaMessage?, KafkaError>? {
        condition.lock()
        defer { condition.unlock() }
        if let message = buffer.popFirst() {
            condition.signal()
            return .success(message)
        }
        if finished || Task.isCancelled { return failure.map { .failure($0) } ?? .success(nil) }
        if let reader {
            precondition(waiter == nil, "KafkaConsumer.messages supports a single reader")
            waiter = reader
        }
        return nil
    }

    /// Up to `max` messages already buffered, at once (none if none is).
    func takeBuffered(max: Int) -> [KafkaMessage] {
        condition.lock()
        defer { condition.unlock() }
        let taken = Array(buffer.prefix(max))
        buffer.removeFirst(taken.count)
        if !taken.isEmpty { condition.signal() }
        return taken
    }

    /// Drops buffered messages that match, e.g. those of revoked partitions.
    /// - Returns: how many were dropped.
    @discardableResult
    func removeAll(where predicate: (KafkaMessage) -> Bool) -> Int {
        condition.lock()
        let before = buffer.count
        buffer.removeAll(where: predicate)
        let removed = before - buffer.count
        if removed > 0 { condition.broadcast() }
        condition.unlock()
        return removed
    }

    /// Ends the stream: the reader drains what is buffered, then gets nil (or `error`).
    func finish(error: KafkaError? = nil) {
        condition.lock()
        finished = true
        if failure == nil { failure = error }
        let w = waiter
        waiter = nil
        condition.broadcast()
        condition.unlock()
        w?.resume(returning: error.map { .failure($0) } ?? .success(nil))
    }

    /// How many messages were accepted since the start (read or not).
    var pushedTotal: Int {
        condition.lock()
        defer { condition.unlock() }
        return pushed
    }

    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return buffer.count
    }
}
