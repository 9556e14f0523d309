import RecordDecoding
import Synchronization

/// Writer schemas by ID, each fetched once however many records ask at the same time.
///
/// A registered schema never changes under its ID, so a schema is kept for good. A permanent
/// failure (no such ID, a schema that cannot be read) is kept for ``failureLifetime`` so that a
/// topic full of one bad ID asks the registry once a minute, not once a record. A lock, not an
/// actor: a cached schema is returned without suspending.
final class SchemaCache: Sendable {
    typealias Load = @Sendable () async throws(SchemaLookupError) -> WriterSchema

    private enum Slot {
        case ready(Result<WriterSchema, SchemaLookupError>, until: ContinuousClock.Instant?)
        /// One caller loads; these wait for it, by a token so a cancelled waiter can leave.
        case loading(waiters: [UInt64: CheckedContinuation<Void, Never>])

        func expired(at now: ContinuousClock.Instant) -> Bool {
            if case .ready(_, let until?) = self { until <= now } else { false }
        }

        /// What the slot holds for callers at `now`: nil while it loads, or once its failure expired.
        func held(at now: ContinuousClock.Instant) -> Result<WriterSchema, SchemaLookupError>? {
            if case .ready(let result, _) = self, !expired(at: now) { result } else { nil }
        }
    }

    private struct State {
        var slots: [UInt32: Slot] = [:]
        var nextToken: UInt64 = 0
    }

    private let state = Mutex(State())
    let failureLifetime: Duration
    /// The time a failure's lifetime is counted in: the clock's, or a test's.
    private let now: @Sendable () -> ContinuousClock.Instant
    /// Past this many IDs, expired failures are dropped as new ones arrive.
    static let maxSlots = 10_000

    init(failureLifetime: Duration = .seconds(60), now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.failureLifetime = failureLifetime
        self.now = now
    }

    /// How many callers wait for the load of `id` under way; nil when none runs (for tests).
    func waiting(for id: UInt32) -> Int? {
        state.withLock { s in
            if case .loading(let waiters)? = s.slots[id] { waiters.count } else { nil }
        }
    }

    /// Schemas held now (not failures).
    var count: Int {
        state.withLock { s in
            s.slots.values.reduce(0) { n, slot in
                if case .ready(.success, _) = slot { n + 1 } else { n }
            }
        }
    }

    /// The schema `id` (or the failure kept for it) if held now; nil when a caller of
    /// ``schema(_:load:)`` would have to load it or wait.
    func cached(_ id: UInt32) -> Result<WriterSchema, SchemaLookupError>? {
        let now = now()
        return state.withLock { $0.slots[id]?.held(at: now) }
    }

    private enum Step {
        case done(Result<WriterSchema, SchemaLookupError>)
        case load
        case wait
    }

    /// The schema `id`: cached, or loaded by `load` in this task, or by the task already loading
    /// it. A load cut short by its task's cancellation hands the job to the next caller.
    func schema(_ id: UInt32, load: Load) async throws(SchemaLookupError) -> WriterSchema {
        while true {
            if Task.isCancelled { throw .cancelled }
            let now = now()
            let step = state.withLock { s -> Step in
                if let held = s.slots[id]?.held(at: now) { return .done(held) }
                if case .loading? = s.slots[id] { return .wait }
                s.slots[id] = .loading(waiters: [:])
                return .load
            }
            switch step {
            case .done(let result):
                return try result.get()
            case .load:
                let result: Result<WriterSchema, SchemaLookupError>
                do throws(SchemaLookupError) {
                    result = .success(try await load())
                } catch {
                    result = .failure(error)
                }
                let ended = self.now()
                let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
                    guard case .loading(let waiters)? = s.slots[id] else { return [] }
                    switch result {
                    case .failure(.cancelled): s.slots[id] = nil
                    case .failure:
                        s.slots[id] = .ready(result, until: ended + failureLifetime)
                        // Records naming random IDs must not grow the cache without end.
                        if s.slots.count > Self.maxSlots { s.slots = s.slots.filter { !$0.value.expired(at: ended) } }
                    case .success: s.slots[id] = .ready(result, until: nil)
                    }
                    return Array(waiters.values)
                }
                for waiter in waiters { waiter.resume() }
                return try result.get()
            case .wait:
                await wait(for: id)
            }
        }
    }

    /// Returns when the load of `id` under way ends, or this task is cancelled.
    private func wait(for id: UInt32) async {
        let token = state.withLock { s in
            s.nextToken += 1
            return s.nextToken
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waiting = state.withLock { s -> Bool in
                    guard !Task.isCancelled, case .loading(var waiters)? = s.slots[id] else { return false }
                    waiters[token] = continuation
                    s.slots[id] = .loading(waiters: waiters)
                    return true
                }
                if !waiting { continuation.resume() }
            }
        } onCancel: {
            let continuation = state.withLock { s -> CheckedContinuation<Void, Never>? in
                guard case .loading(var waiters)? = s.slots[id], let c = waiters.removeValue(forKey: token) else { return nil }
                s.slots[id] = .loading(waiters: waiters)
                return c
            }
            continuation?.resume()
        }
    }
}
