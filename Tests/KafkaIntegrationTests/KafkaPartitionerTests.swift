import Kafka
import TestSupport
import Testing

/// ``KafkaPartitioner`` against a real producer: each name is a librdkafka `partitioner`
/// setting, and the partition the broker stored a keyed record in is the one it computes.
@Suite("KafkaPartitioner: where librdkafka's producers put a key")
struct KafkaPartitionerTests {
    @Test(
        "murmur2, consistent and fnv1a agree with a producer configured with each (mock cluster, 7 partitions)", arguments: KafkaPartitioner.allCases)
    func agreesWithProducer(_ partitioner: KafkaPartitioner) async throws {
        let broker = try await TestBroker.start(.mock, brokers: 1)
        let topic = try await broker.makeTopic(partitions: 7, "part")
        var configuration = KafkaProducerConfiguration(bootstrapServers: [broker.bootstrapServers])
        // librdkafka's name for each: the `_random` variants differ only for null keys.
        configuration.properties["partitioner"] = partitioner == .consistent ? "consistent_random" : "\(partitioner.rawValue)_random"
        let producer = try KafkaProducer(configuration: configuration)
        var rng = SplitMix64(seed: 55)
        var seen = Set<Int32>()
        for i in 0..<60 {
            let key = i < 5 ? Array("user-\(i)".utf8) : (0..<(i % 23 + 1)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let report = try await producer.send(KafkaProducerRecord(topic: topic, key: key, value: [1]))
            #expect(report.partition == partitioner.partition(of: key, count: 7), "key \(key)")
            seen.insert(report.partition)
        }
        #expect(seen.count > 3, "keys spread over the partitions")
        await producer.close()
    }

    @Test("the three hashes differ: a wrong choice is caught")
    func hashesDiffer() {
        let keys = (0..<50).map { Array("user-\($0)".utf8) }
        for (a, b) in [(KafkaPartitioner.murmur2, KafkaPartitioner.consistent), (.murmur2, .fnv1a), (.consistent, .fnv1a)] {
            let same = keys.filter { a.partition(of: $0, count: 12) == b.partition(of: $0, count: 12) }.count
            #expect(same < 15, "\(a) and \(b) agree on \(same) of 50 keys")
        }
    }
}
