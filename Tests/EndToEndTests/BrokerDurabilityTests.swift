import Foundation
import Kafka
import Pipeline
import PipelineTestSupport
import Synchronization
import TestSupport
import Testing

/// What "durably dead-lettered" stands on: every record the pipeline's output producer had
/// acknowledged when the broker was killed is there after the broker restarts. (With an
/// idempotent producer, tansu 0.6 failed this: docs/reliability.md.)
@Suite("Dead-letter writes survive a kill -9 of the broker (tansu on s3://)", .serialized)
struct BrokerDurabilityTests {
    final class Outcome: Sendable {
        let acknowledged = Mutex<[(key: String, offset: Int64)]>([])
        let failed = Mutex<[String]>([])
    }

    @Test("records the output producer acknowledged around a kill -9 of tansu are all readable after its restart")
    func acknowledgedRecordsSurvive() async throws {
        let s3 = try await S3Server.start()
        let tansu = try await Tansu.start(storage: .s3(endpoint: s3.endpoint, bucket: s3.bucket))
        let topic = "durable"
        try await tansu.createTopic(topic, partitions: 1)
        var configuration = OutputRecords.producerConfiguration(brokers: [tansu.bootstrapServers], properties: [:])
        configuration.deliveryTimeout = .seconds(120)
        let idempotent = ProcessInfo.processInfo.environment["PUSHBRIDGE_DURABILITY_IDEMPOTENT"] == "1"
        configuration.enableIdempotence = idempotent
        let producer = try KafkaProducer(configuration: configuration)

        // 60 batches of 50 concurrent sends, 100 ms apart; the broker is killed after 2.5 s.
        let outcome = Outcome()
        let writer = Task {
            for b in 0..<60 {
                await withTaskGroup(of: Void.self) { group in
                    for i in 0..<50 {
                        let key = "k-\(b)-\(i)"
                        group.addTask {
                            do {
                                let r = try await producer.send(
                                    KafkaProducerRecord(topic: topic, partition: 0, key: Array(key.utf8), value: Array(key.utf8)))
                                outcome.acknowledged.withLock { $0.append((key, r.offset)) }
                            } catch {
                                outcome.failed.withLock { $0.append("\(key): \(error)") }
                            }
                        }
                    }
                }
                try? await Task.sleep(for: .milliseconds(100))
            }
        }
        try await Task.sleep(for: .milliseconds(2500))
        try await tansu.restart(hard: true, downtime: .seconds(2))
        await writer.value
        await producer.close()

        let reader = try WelcomeEvents(bootstrapServers: tansu.bootstrapServers, topic: topic)
        let records = try await reader.readAll(topic).map { (key: String(decoding: $0.key ?? [], as: UTF8.self), offset: $0.offset) }
        await reader.close()

        let acks = outcome.acknowledged.withLock { $0 }
        let readKeys = Set(records.map(\.key))
        let missing = acks.filter { !readKeys.contains($0.key) }
        var byOffset: [Int64: [String]] = [:]
        for a in acks { byOffset[a.offset, default: []].append(a.key) }
        let sharedOffsets = byOffset.filter { $0.value.count > 1 }
        let failures = outcome.failed.withLock { $0 }
        FileHandle.standardError.write(
            Data(
                """
                [durability] idempotent=\(idempotent) acknowledged=\(acks.count) failed=\(failures.count) read=\(records.count) \
                missing=\(missing.count) offsets acknowledged twice=\(sharedOffsets.count)
                [durability] missing: \(missing.prefix(10)) shared: \(sharedOffsets.sorted { $0.key < $1.key }.prefix(5)) failed: \(failures.prefix(3))
                [durability] read offsets: first \(records.first.map { "\($0.offset)" } ?? "-") last \(records.last.map { "\($0.offset)" } ?? "-")

                """.utf8))
        #expect(missing.isEmpty, "acknowledged but not readable after the restart: \(missing.prefix(10))")
        #expect(sharedOffsets.isEmpty, "the same offset acknowledged for different records: \(sharedOffsets.prefix(5))")
    }
}
