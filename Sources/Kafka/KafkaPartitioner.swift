/// How a producer chose a keyed record's partition: the hash of its key modulo the partition
/// count. A consumer that keeps state per key checks records against it (the rules engine's
/// direct mode, docs/rules.md): a record its producer placed by another hash would be decided
/// against another partition's state.
///
/// | name | hash | producers |
/// |---|---|---|
/// | `murmur2` | Kafka's murmur2 (``Murmur2``), positive | Java's default, franz-go, librdkafka's `murmur2_random` |
/// | `consistent` | CRC32 | librdkafka's default (`consistent_random`): confluent-kafka-python/-go/.NET, rdkafka-ruby |
/// | `fnv1a` | FNV-1a 32 | librdkafka's `fnv1a_random`; Sarama's hash partitioner **(its sign handling unverified)** |
///
/// Computed by librdkafka's own partitioner functions, so they agree with its producers.
public enum KafkaPartitioner: String, Sendable, CaseIterable {
    case murmur2, consistent, fnv1a

    /// The partition among `count` (> 0) this partitioner gives `key`.
    public func partition(of key: [UInt8], count: Int32) -> Int32 {
        switch self {
        case .murmur2: RDKafkaPartitioner.murmur2(key, count: count)
        case .consistent: RDKafkaPartitioner.consistent(key, count: count)
        case .fnv1a: RDKafkaPartitioner.fnv1a(key, count: count)
        }
    }
}
