import FCM
import Kafka
import Pipeline
import Synchronization

/// FCM for the pipeline's scenarios: accepts every send, records its target, and holds sends
/// while ``hold()`` is on. Like ``FCMClient``, a send whose task is cancelled ends at once with
/// ``FCMError/cancelled`` (the worker is stopping), and is not recorded as accepted.
final class FakeSender: PushSending {
    private struct State {
        var accepted: [MessageTarget?] = []
        var held = false
        /// Sends from the n-th on (counted from 0) wait as under ``hold()``.
        var holdFrom: Int?
        var started = 0
        var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Sends begun, held ones included.
    var started: Int { state.withLock { $0.started } }

    /// The targets' values of the sends accepted, in order ("?" for none).
    var accepted: [String] { acceptedTargets.map { $0?.value ?? "?" } }

    /// The targets of the sends accepted, in order, as the client was given them.
    var acceptedTargets: [MessageTarget?] { state.withLock { $0.accepted } }

    /// Sends from now on wait until ``release()``.
    func hold() { state.withLock { $0.held = true } }

    /// The `count` first sends go through; the ones after wait until ``release()``.
    func hold(after count: Int) { state.withLock { $0.holdFrom = count } }

    func release() {
        let waiting = state.withLock { s in
            s.held = false
            s.holdFrom = nil
            defer { s.waiting = [:] }
            return Array(s.waiting.values)
        }
        for w in waiting { w.resume() }
    }

    func projectID(of project: String?) -> String? { project == nil ? "fake" : nil }

    func send(_ message: [UInt8], project: String?, to target: MessageTarget?, validateOnly: Bool) async -> FCMClient.SendResult {
        let (id, held) = state.withLock { s in
            defer {
                s.nextID += 1
                s.started += 1
            }
            return (s.nextID, s.held || s.holdFrom.map { s.started >= $0 } ?? false)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let go = state.withLock { s -> Bool in
                    guard held, s.held || s.holdFrom != nil, !Task.isCancelled else { return true }
                    s.waiting[id] = c
                    return false
                }
                if go { c.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiting.removeValue(forKey: id) }?.resume()
        }
        if Task.isCancelled { return FCMClient.SendResult(outcome: .failure(.cancelled), attempts: 1) }
        state.withLock { $0.accepted.append(target) }
        return FCMClient.SendResult(outcome: .success("projects/fake/messages/\(id)"), attempts: 1)
    }

    var concurrencyLimit: Int { 100 }

    func setProjectShare(_ project: String, sendsPerSecond: Double?) {}
}

/// A broker for the dead-letter and invalidation records: stores each at once.
final class FakeProducer: RecordProducing {
    private let records = Mutex<[KafkaProducerRecord]>([])

    var written: [KafkaProducerRecord] { records.withLock { $0 } }

    func send(_ record: KafkaProducerRecord) async throws(KafkaError) -> KafkaDeliveryReport {
        let offset = records.withLock { r in
            r.append(record)
            return Int64(r.count - 1)
        }
        return KafkaDeliveryReport(topic: record.topic, partition: 0, offset: offset)
    }
}
