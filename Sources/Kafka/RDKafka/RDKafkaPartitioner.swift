import CRdKafka

/// librdkafka's own partitioners, called directly (no topic handle: `murmur2` reads only the key).
enum RDKafkaPartitioner {
    /// `rd_kafka_msg_partitioner_murmur2`: the partition among `count` librdkafka's `murmur2`
    /// partitioner gives a non-null key. The reference ``Murmur2`` is tested against.
    static func murmur2(_ key: [UInt8], count: Int32) -> Int32 {
        key.withUnsafeBytes { bytes in
            rd_kafka_msg_partitioner_murmur2(nil, bytes.baseAddress, bytes.count, count, nil, nil)
        }
    }
}
