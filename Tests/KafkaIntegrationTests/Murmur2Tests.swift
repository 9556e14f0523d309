import TestSupport
import Testing

@testable import Kafka

/// Kafka's key hash in Swift (``Murmur2``) against librdkafka's `murmur2` partitioner, called
/// directly (no broker).
@Suite("Murmur2: Kafka's key hash, as librdkafka's murmur2 partitioner")
struct Murmur2Tests {
    @Test("the same partition as rd_kafka_msg_partitioner_murmur2 for keys of every length 0-64 and partition counts 1-257")
    func sameAsLibrdkafka() {
        var rng = SplitMix64(seed: 56)
        for length in 0...64 {
            for _ in 0..<40 {
                let key = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                for count in [1, 2, 6, 7, 18, 108, 257] {
                    #expect(Murmur2.partition(key, count: count) == Int(RDKafkaPartitioner.murmur2(key, count: Int32(count))), "\(key) over \(count)")
                }
            }
        }
        for user in ["user-1", "user-42", "ann", "Zoë", ""] {
            let key = Array(user.utf8)
            #expect(Murmur2.partition(key, count: 6) == Int(RDKafkaPartitioner.murmur2(key, count: 6)), "\(user)")
        }
    }

    @Test("Kafka's own test vectors (UtilsTest.testMurmur2), as Java's signed int")
    func javaVectors() {
        let cases: [(String, Int32)] = [
            ("21", -973_932_308), ("foobar", -790_332_482), ("a-little-bit-long-string", -985_981_536),
            ("a-little-bit-longer-string", -1_486_304_829), ("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58_897_971),
            ("abc", 479_470_107),
        ]
        for (text, expected) in cases {
            #expect(Int32(bitPattern: Murmur2.hash(Array(text.utf8))) == expected, "\(text)")
        }
    }
}
