import CRdKafka

/// librdkafka's own partitioners, called directly (no topic handle: for a key, each reads only
/// the key and the partition count).
enum RDKafkaPartitioner {
    /// `rd_kafka_msg_partitioner_murmur2`: the partition among `count` librdkafka's `murmur2`
    /// partitioner gives a non-null key. The reference ``Murmur2`` is tested against.
    static func murmur2(_ key: [UInt8], count: Int32) -> Int32 {
        key.withUnsafeBytes { bytes in
            rd_kafka_msg_partitioner_murmur2(nil, bytes.baseAddress, bytes.count, count, nil, nil)
        }
    }

    /// `rd_kafka_msg_partitioner_consistent`: CRC32 of the key (librdkafka's default,
    /// `consistent_random`, for a non-null key).
    static func consistent(_ key: [UInt8], count: Int32) -> Int32 {
        key.withUnsafeBytes { bytes in
            rd_kafka_msg_partitioner_consistent(nil, bytes.baseAddress, bytes.count, count, nil, nil)
        }
    }

    /// `rd_kafka_msg_partitioner_fnv1a`: FNV-1a of the key (Sarama's hash partitioner's hash).
    static func fnv1a(_ key: [UInt8], count: Int32) -> Int32 {
        key.withUnsafeBytes { bytes in
            rd_kafka_msg_partitioner_fnv1a(nil, bytes.baseAddress, bytes.count, count, nil, nil)
        }
    }
}
