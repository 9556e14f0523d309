import Foundation
import Kafka

/// Produces `messages` records to a fresh topic, then times a group consumer reading them all.
enum KafkaBenchmark {
    static func run(bootstrap: String, topic: String, messages: Int, valueSize: Int) async throws -> [(name: String, value: Double)] {
        var pc = KafkaProducerConfiguration(bootstrapServers: [bootstrap])
        pc.linger = .milliseconds(20)
        pc.properties["batch.num.messages"] = "10000"
        let producer = try KafkaProducer(configuration: pc)
        let value = [UInt8](repeating: UInt8(ascii: "x"), count: valueSize)
        let produceStart = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<messages {
                if i >= 5_000 { try await group.next() }
                group.addTask {
                    _ = try await producer.send(KafkaProducerRecord(topic: topic, key: Array(String(i).utf8), value: value))
                }
            }
            try await group.waitForAll()
        }
        let produceSeconds = seconds(ContinuousClock.now - produceStart)
        await producer.close()

        var cc = KafkaConsumerConfiguration(bootstrapServers: [bootstrap], groupID: "bench-\(UUID().uuidString.prefix(8))")
        cc.sessionTimeout = .seconds(6)
        let consumer = try KafkaConsumer(configuration: cc)
        try consumer.subscribe(topics: [topic])
        var count = 0
        var start: ContinuousClock.Instant?
        for try await _ in consumer.messages {
            if start == nil { start = .now }  // exclude the group join
            count += 1
            if count == messages { break }
        }
        let consumeSeconds = seconds(ContinuousClock.now - start!)
        await consumer.close()
        return [
            ("kafka_produce_messages_per_second", Double(messages) / produceSeconds),
            ("kafka_consume_messages_per_second", Double(messages - 1) / consumeSeconds),
        ]
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
}
