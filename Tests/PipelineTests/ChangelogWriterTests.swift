import Kafka
import Rules
import Synchronization
import Testing

@testable import Pipeline

/// ``ChangelogWriter``'s group commit, with a send the test answers by hand.
@Suite("The changelog writer: facts written while a record is in flight share the next")
struct ChangelogWriterTests {
    /// A send that records each record's facts and waits until the test answers it.
    final class Sends: Sendable {
        private let records = Mutex<[[Fact]]>([])
        private let answers = Mutex<[CheckedContinuation<Result<Int64, KafkaError>, Never>]>([])
        let started: AsyncStream<Int>
        private let startedContinuation: AsyncStream<Int>.Continuation

        init() { (started, startedContinuation) = AsyncStream.makeStream() }

        var sent: [[Fact]] { records.withLock { $0 } }

        @Sendable func send(_ facts: [Fact]) async throws(KafkaError) -> Int64 {
            let result = await withCheckedContinuation { continuation in
                let count = records.withLock {
                    $0.append(facts)
                    return $0.count
                }
                answers.withLock { $0.append(continuation) }
                startedContinuation.yield(count)
            }
            return try result.get()
        }

        /// Answers the oldest record in flight.
        func answer(_ result: Result<Int64, KafkaError>) {
            answers.withLock { $0.removeFirst() }.resume(returning: result)
        }
    }

    static func fact(_ i: Int) -> Fact {
        .notification(
            NotificationFact(
                notification: NotificationID(eventID: "e\(i)", mapping: "m", subject: "u"), status: .released, attempt: 1, at: 0,
                expires: 1, owner: "o"))
    }

    @Test("a quiet writer sends at once; writers arriving meanwhile wait and go out together, each answered with that record's offset")
    func batches() async throws {
        let sends = Sends()
        let writer = ChangelogWriter(send: sends.send)
        var started = sends.started.makeAsyncIterator()
        async let first = writer.write(Self.fact(0))
        #expect(await started.next() == 1)
        let rest = Task {
            try await withThrowingTaskGroup(of: Int64.self) { group in
                for i in 1...5 { group.addTask { try await writer.write(Self.fact(i)) } }
                return try await group.reduce(into: [Int64]()) { $0.append($1) }
            }
        }
        while writer.waiting < 5 { await Task.yield() }
        sends.answer(.success(10))
        #expect(try await first == 10)
        #expect(await started.next() == 2)
        sends.answer(.success(11))
        #expect(try await rest.value == Array(repeating: 11, count: 5))
        #expect(sends.sent.count == 2 && sends.sent[0] == [Self.fact(0)])
        #expect(Set(sends.sent[1].map { "\($0)" }) == Set((1...5).map { "\(Self.fact($0))" }))
        #expect(writer.waiting == 0)
        async let again = writer.write(Self.fact(6))
        #expect(await started.next() == 3, "nothing in flight: the next write sends at once")
        sends.answer(.success(12))
        #expect(try await again == 12)
    }

    @Test("a record Kafka refuses fails every write in it; the writers after it go on")
    func failure() async throws {
        let sends = Sends()
        let writer = ChangelogWriter(send: sends.send)
        var started = sends.started.makeAsyncIterator()
        async let first = writer.write(Self.fact(0))
        #expect(await started.next() == 1)
        let second = Task { try await writer.write(Self.fact(1)) }
        let third = Task { try await writer.write(Self.fact(2)) }
        while writer.waiting < 2 { await Task.yield() }
        sends.answer(.success(3))
        #expect(try await first == 3)
        #expect(await started.next() == 2)
        sends.answer(.failure(KafkaError(code: .closed, message: "closed")))
        await #expect(throws: KafkaError.self) { try await second.value }
        await #expect(throws: KafkaError.self) { try await third.value }
        async let fourth = writer.write(Self.fact(3))
        #expect(await started.next() == 3)
        sends.answer(.success(4))
        #expect(try await fourth == 4)
    }
}
