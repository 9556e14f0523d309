import Kafka
import Rules
import Synchronization

/// Writes an owner's facts to its changelog partition with one record in flight at a time
/// (group commit): the facts written while a record is in flight go out together in the next
/// one (``FactCodec/encodeRecord(_:)``), each answered with that record's offset. A busy
/// partition pays Kafka's per-record cost (the produce, its delivery report, the tail's read and
/// decode) once per batch instead of once per fact; a quiet one writes each fact at once, as
/// before. Order holds: a fact's record is never before the record of a fact written earlier.
///
/// No task of its own: the writer that finds nothing in flight sends; when its record is
/// acknowledged, it wakes the first writer that waited, which takes everything waiting then.
final class ChangelogWriter: Sendable {
    private let send: @Sendable ([Fact]) async throws(KafkaError) -> Int64
    private let state = Mutex(State())

    private struct State {
        var inFlight = false
        var waiting: [Waiter] = []
    }

    private struct Waiter {
        var fact: Fact
        var continuation: CheckedContinuation<Turn, Never>
    }

    /// What a waiting writer is woken with.
    private enum Turn {
        case written(Int64)
        case failed(KafkaError)
        /// Send the next record: this writer's fact and what waits with it.
        case lead(Fact)
    }

    /// - Parameter send: produces one record of these facts; its offset.
    init(send: @escaping @Sendable ([Fact]) async throws(KafkaError) -> Int64) {
        self.send = send
    }

    /// Writers waiting for the record in flight to be acknowledged.
    var waiting: Int { state.withLock { $0.waiting.count } }

    /// Writes `fact`: the offset of the record it went out in, once Kafka acknowledged it.
    func write(_ fact: Fact) async throws(KafkaError) -> Int64 {
        let turn = await withCheckedContinuation { (continuation: CheckedContinuation<Turn, Never>) in
            let lead = state.withLock { state -> Bool in
                if state.inFlight {
                    state.waiting.append(Waiter(fact: fact, continuation: continuation))
                    return false
                }
                state.inFlight = true
                return true
            }
            if lead { continuation.resume(returning: .lead(fact)) }
        }
        switch turn {
        case .written(let offset): return offset
        case .failed(let error): throw error
        case .lead(let fact): return try await lead(fact)
        }
    }

    /// Sends `own` with what waits (up to a record's worth), answers them, and hands the next
    /// record to the first writer still waiting.
    private func lead(_ own: Fact) async throws(KafkaError) -> Int64 {
        let batch = state.withLock { state -> [Waiter] in
            let taken = Array(state.waiting.prefix(FactCodec.maxFactsPerRecord - 1))
            state.waiting.removeFirst(taken.count)
            return taken
        }
        let result: Result<Int64, KafkaError>
        do throws(KafkaError) {
            result = .success(try await send([own] + batch.map(\.fact)))
        } catch {
            result = .failure(error)
        }
        for waiter in batch {
            switch result {
            case .success(let offset): waiter.continuation.resume(returning: .written(offset))
            case .failure(let error): waiter.continuation.resume(returning: .failed(error))
            }
        }
        let next = state.withLock { state -> Waiter? in
            guard !state.waiting.isEmpty else {
                state.inFlight = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        next.map { $0.continuation.resume(returning: .lead($0.fact)) }
        return try result.get()
    }
}
