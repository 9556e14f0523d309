import Foundation
import Kafka
import Synchronization
import TestSupport

extension KafkaConsumerConfiguration {
    /// A group member tuned for tests: short session (tansu's first join waits about half of
    /// it), reading from the beginning.
    static func test(_ broker: TestBroker, group: String?, instance: String? = nil) -> KafkaConsumerConfiguration {
        var c = KafkaConsumerConfiguration(bootstrapServers: [broker.bootstrapServers], groupID: group)
        c.sessionTimeout = .seconds(6)
        c.heartbeatInterval = .milliseconds(500)
        c.groupInstanceID = instance
        c.properties["topic.metadata.refresh.interval.ms"] = "1000"
        c.properties["log_level"] = "2"  // errors reach the tests through errorHandler
        return c
    }
}

/// Produces `count` records `0..<count` (value = key = decimal index), all acknowledged.
func produce(_ count: Int, to topic: String, on broker: TestBroker, from start: Int = 0, partition: Int32? = nil) async throws {
    var config = KafkaProducerConfiguration(bootstrapServers: [broker.bootstrapServers])
    config.properties["log_level"] = "2"
    let producer = try KafkaProducer(configuration: config)
    try await withThrowingTaskGroup(of: Void.self) { group in
        let window = 500
        for i in start..<(start + count) {
            if i - start >= window { try await group.next() }
            group.addTask {
                let bytes = Array(String(i).utf8)
                _ = try await producer.send(KafkaProducerRecord(topic: topic, partition: partition, key: bytes, value: bytes))
            }
        }
        try await group.waitForAll()
    }
    await producer.close()
}

/// Reads messages until `count` have arrived or `timeout` passes.
func collect(_ count: Int, from consumer: KafkaConsumer, timeout: Duration = .seconds(60)) async throws -> [KafkaMessage] {
    try await withThrowingTaskGroup(of: [KafkaMessage]?.self) { group in
        group.addTask {
            var out: [KafkaMessage] = []
            for try await m in consumer.messages {
                out.append(m)
                if out.count == count { break }
            }
            return out
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        return first ?? []
    }
}

/// Reads messages until `enough` says so or `timeout` passes; returns what arrived (also on
/// timeout). For cases where a rebalance may deliver some messages twice.
func collect(
    from consumer: KafkaConsumer, timeout: Duration = .seconds(60), until enough: @escaping @Sendable ([KafkaMessage]) -> Bool
) async throws -> [KafkaMessage] {
    let received = Mutex<[KafkaMessage]>([])
    let reader = Task {
        for try await m in consumer.messages {
            if received.withLock({
                $0.append(m)
                return enough($0)
            }) {
                break
            }
        }
    }
    _ = await eventually(timeout: timeout) { received.withLock { enough($0) } }
    reader.cancel()
    _ = await reader.result
    return received.withLock { $0 }
}

/// The next offsets to commit (last seen + 1 per partition) for a set of processed messages.
func nextOffsets(after messages: some Sequence<KafkaMessage>, metadata: String? = nil) -> [TopicPartitionOffset] {
    var high: [TopicPartition: Int64] = [:]
    for m in messages { high[m.topicPartition] = max(high[m.topicPartition] ?? -1, m.offset) }
    return high.sorted { $0.key.partition < $1.key.partition }.map {
        TopicPartitionOffset($0.key, offset: KafkaOffset($0.value + 1), metadata: metadata)
    }
}

/// A thread-safe log of events, for handler assertions.
final class EventLog<T: Sendable>: Sendable {
    private let items = Mutex<[T]>([])
    func append(_ item: T) { items.withLock { $0.append(item) } }
    var all: [T] { items.withLock { $0 } }
}
