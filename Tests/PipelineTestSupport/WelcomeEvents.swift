import FCMEmulator
import Kafka
import Synchronization

/// A topic of `user.welcome` events with one token each, and what a consumer group made of it:
/// shared by the in-process pipeline tests (mock cluster) and the end-to-end tests (tansu).
public final class WelcomeEvents: Sendable {
    /// The mapping the events are meant for: a title with the name as its argument.
    public static let mapping = """
        version: 1
        events:
          user.welcome:
            target:
              token: {field: /token}
            title:
              key: welcome_title
              args:
                - {field: /name}
        """

    public let bootstrapServers: String
    public let topic: String
    /// librdkafka properties of every client here (TLS, for a broker behind it).
    public let properties: [String: String]
    /// Also fit for writing other records (the pipeline's dead-letter and invalidation topics).
    public let producer: KafkaProducer
    /// The next offset per partition after everything produced so far.
    let ends = Mutex<[Int32: Int64]>([:])

    /// The next offset per partition after everything produced so far.
    public var producedEnds: [Int32: Int64] { ends.withLock { $0 } }

    public init(bootstrapServers: String, topic: String, properties: [String: String] = [:]) throws {
        self.bootstrapServers = bootstrapServers
        self.topic = topic
        self.properties = properties
        var configuration = KafkaProducerConfiguration(bootstrapServers: [bootstrapServers])
        configuration.properties = properties
        // Long enough to outlast injected broker faults: a record must not be lost by the test.
        configuration.deliveryTimeout = .seconds(300)
        // As the pipeline's own producer: an idempotent one can be told "delivered" for a batch
        // tansu never stored when it was killed (OutputRecords.producerConfiguration).
        configuration.enableIdempotence = false
        producer = try KafkaProducer(configuration: configuration)
    }

    /// Produces `count` events with tokens `<prefix>-<i>` (also their keys); returns the tokens.
    @discardableResult
    public func produce(_ count: Int, prefix: String) async throws -> [String] {
        let tokens = (0..<count).map { "\(prefix)-\($0)" }
        try await withThrowingTaskGroup(of: KafkaDeliveryReport.self) { group in
            for token in tokens {
                let value = #"{"type":"user.welcome","id":"\#(token)","name":"N","token":"\#(token)"}"#
                group.addTask {
                    try await self.producer.send(KafkaProducerRecord(topic: self.topic, key: Array(token.utf8), value: Array(value.utf8)))
                }
            }
            for try await r in group { record(r) }
        }
        return tokens
    }

    /// Produces raw values (e.g. malformed events).
    public func produceRaw(_ values: [String]) async throws {
        for v in values { record(try await producer.send(KafkaProducerRecord(topic: topic, value: Array(v.utf8)))) }
    }

    /// Produces records one after another, each acknowledged before the next is sent: their
    /// order within a partition is the order given.
    public func produceInOrder(records: [KafkaProducerRecord]) async throws {
        for r in records { record(try await producer.send(r)) }
    }

    /// Produces records as they are (keys, values and headers), all at once.
    public func produce(records: [KafkaProducerRecord]) async throws {
        try await withThrowingTaskGroup(of: KafkaDeliveryReport.self) { group in
            for r in records { group.addTask { try await self.producer.send(r) } }
            for try await r in group { record(r) }
        }
    }

    private func record(_ r: KafkaDeliveryReport) {
        ends.withLock { $0[r.partition] = max($0[r.partition] ?? 0, r.offset + 1) }
    }

    /// The group's committed offsets as the broker has them.
    public func committed(group: String) async throws -> [Int32: Int64] {
        let partitions = ends.withLock { Array($0.keys) }.map { TopicPartition(topic: topic, partition: $0) }
        let admin = try KafkaConsumer(configuration: consumerConfiguration(group: group))
        var result: [Int32: Int64] = [:]
        let offsets = try await admin.committed(partitions)
        await admin.close()
        for o in offsets where o.offset.isConcrete { result[o.partition] = o.offset.rawValue }
        return result
    }

    /// Waits until the group has committed everything produced, or `timeout` passes.
    public func waitUntilCommitted(group: String, timeout: Duration, poll: Duration = .milliseconds(200)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        let want = ends.withLock { $0 }
        while ContinuousClock.now < deadline {
            let have = (try? await committed(group: group)) ?? [:]
            if want.allSatisfy({ have[$0.key] == $0.value }) { return true }
            try await Task.sleep(for: poll)
        }
        return false
    }

    /// The keys (tokens) at offsets `ranges[p]` of each partition `p`, read back from the topic.
    public func keys(in ranges: [Int32: Range<Int64>]) async throws -> Set<String> {
        let below = try await keysWithOffsets(below: ranges.mapValues(\.upperBound))
        return Set(below.filter { ranges[$0.partition]?.contains($0.offset) == true }.map(\.key))
    }

    /// The keys (tokens) of the events below `committed`, read back from the topic.
    public func keysBelow(_ committed: [Int32: Int64]) async throws -> [String] {
        try await keysWithOffsets(below: committed).map(\.key)
    }

    private func keysWithOffsets(below committed: [Int32: Int64]) async throws -> [(partition: Int32, offset: Int64, key: String)] {
        let want = committed.values.reduce(0, +)
        guard want > 0 else { return [] }
        let consumer = try KafkaConsumer(configuration: consumerConfiguration(group: nil))
        try consumer.assign(committed.keys.map { TopicPartitionOffset(TopicPartition(topic: topic, partition: $0), offset: .beginning) })
        var keys: [(partition: Int32, offset: Int64, key: String)] = []
        for try await m in consumer.messages {
            guard let limit = committed[m.partition], m.offset < limit else { continue }
            keys.append((m.partition, m.offset, String(decoding: m.key ?? [], as: UTF8.self)))
            if keys.count == want { break }
        }
        await consumer.close()
        return keys
    }

    /// Records of a one-partition `topic` from the beginning, until `count` arrived or 20 s passed.
    public func read(_ topic: String, count: Int) async throws -> [KafkaMessage] {
        let c = try KafkaConsumer(configuration: consumerConfiguration(group: nil))
        try c.assign([TopicPartitionOffset(TopicPartition(topic: topic, partition: 0), offset: .beginning)])
        let reader = Task {
            var out: [KafkaMessage] = []
            for try await m in c.messages {
                out.append(m)
                if out.count >= count { break }
            }
            return out
        }
        let timer = Task {
            try await Task.sleep(for: .seconds(20))
            reader.cancel()
        }
        let result = try await reader.value
        timer.cancel()
        await c.close()
        return result
    }

    /// Every record of `topic`'s first `partitions`, read from the beginning until none has
    /// arrived for `idle` (the broker's end offset cannot be trusted: tansu's is wrong).
    public func readAll(_ topic: String, partitions: Int32 = 1, idle: Duration = .seconds(5)) async throws -> [KafkaMessage] {
        let c = try KafkaConsumer(configuration: consumerConfiguration(group: nil))
        try c.assign((0..<partitions).map { TopicPartitionOffset(TopicPartition(topic: topic, partition: $0), offset: .beginning) })
        let received = Mutex<(messages: [KafkaMessage], last: ContinuousClock.Instant)>(([], .now))
        let reader = Task {
            for try await m in c.messages {
                received.withLock {
                    $0.messages.append(m)
                    $0.last = .now
                }
            }
        }
        while received.withLock({ ContinuousClock.now - $0.last < idle }) { try await Task.sleep(for: .milliseconds(200)) }
        reader.cancel()
        _ = await reader.result
        await c.close()
        return received.withLock { $0.messages }
    }

    /// A consumer of this broker, with ``properties``.
    public func consumerConfiguration(group: String?) -> KafkaConsumerConfiguration {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: [bootstrapServers], groupID: group)
        configuration.properties = properties
        return configuration
    }

    public func close() async {
        await producer.close()
    }
}

extension FCMEmulator {
    /// Tokens of accepted (not validate-only) sends, with how often each was accepted.
    public var acceptedTokens: [String: Int] {
        var counts: [String: Int] = [:]
        for m in messages where !m.validateOnly { counts[m.token ?? "", default: 0] += 1 }
        return counts
    }
}
