/// Kafka's key hash: `org.apache.kafka.common.utils.Utils.murmur2` (MurmurHash2, seed
/// `0x9747b28c`), which the Java client's default partitioner and librdkafka's `murmur2`
/// partitioner (`rd_murmur2`) both use, so a key lands where a Java producer would put it.
/// Tested against librdkafka's `rd_kafka_msg_partitioner_murmur2` (KafkaIntegrationTests).
public enum Murmur2 {
    /// The 32-bit hash, as Java's signed `int` bits.
    public static func hash(_ key: some Collection<UInt8>) -> UInt32 {
        let m: UInt32 = 0x5bd1_e995
        var h: UInt32 = 0x9747_b28c ^ UInt32(truncatingIfNeeded: key.count)
        var block: UInt32 = 0
        var filled = 0
        for byte in key {
            block |= UInt32(byte) << (8 * filled)
            filled += 1
            guard filled == 4 else { continue }
            var k = block &* m
            k ^= k >> 24
            k = k &* m
            h = (h &* m) ^ k
            (block, filled) = (0, 0)
        }
        if filled > 0 {  // the tail, little-endian, as Java's fall-through switch
            h ^= block
            h = h &* m
        }
        h ^= h >> 13
        h = h &* m
        h ^= h >> 15
        return h
    }

    /// `toPositive(murmur2(key)) % count`: the partition Kafka's partitioners choose among
    /// `count` for a key (`count` > 0).
    public static func partition(_ key: some Collection<UInt8>, count: Int) -> Int {
        Int(hash(key) & 0x7fff_ffff) % count
    }
}
