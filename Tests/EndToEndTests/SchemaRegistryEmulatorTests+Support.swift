import Foundation
import Kafka
import TestSupport

/// What the Schema Registry emulator's tests share: a broker and an emulator, frames, records files
/// and a plain reader.
extension SchemaRegistryEmulatorTests {
    /// tansu with `topics` (one partition each) and an emulator.
    func startBrokerAndRegistry(
        topics: [String], tls: TestCertificates? = nil, user: String? = nil, password: String? = nil
    ) async throws -> (Tansu, SchemaRegistryServer) {
        guard !KafkaConsumer.librdkafkaVersion.hasPrefix("2.0.") else { throw TestSupportError("tansu needs librdkafka >= 2.1; run scripts/test.sh") }
        async let registry = SchemaRegistryServer.start(tls: tls, user: user, password: password)
        let tansu = try await Tansu.start()
        for topic in topics { try await tansu.createTopic(topic, partitions: 1) }
        return (tansu, try await registry)
    }

    /// The 4-byte big-endian schema ID after the magic byte.
    func schemaID(_ value: [UInt8]) -> Int? {
        guard value.count >= 5 else { return nil }
        return value[1..<5].reduce(0) { $0 << 8 | Int($1) }
    }

    func jsonObject(_ text: String) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]
    }

    /// A records file (JSON lines) for produce_records.py, in a temporary folder.
    func writeRecords(_ lines: [String]) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-records-\(UUID().uuidString).jsonl")
        try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    /// The first `count` records of partition 0 of `topic`, read with a plain consumer (no group);
    /// fewer if they have not all arrived within 30 s.
    func readMessages(_ topic: String, count: Int, brokers: String) async throws -> [KafkaMessage] {
        let consumer = try KafkaConsumer(configuration: KafkaConsumerConfiguration(bootstrapServers: [brokers]))
        try consumer.assign([TopicPartitionOffset(TopicPartition(topic: topic, partition: 0), offset: .beginning)])
        let reader = Task {
            var out: [KafkaMessage] = []
            for try await message in consumer.messages {
                out.append(message)
                if out.count >= count { break }
            }
            return out
        }
        let timer = Task {
            try await Task.sleep(for: .seconds(30))
            reader.cancel()
        }
        let messages = try await reader.value
        timer.cancel()
        await consumer.close()
        return messages
    }
}
