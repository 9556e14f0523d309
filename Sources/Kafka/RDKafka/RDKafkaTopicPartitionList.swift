import CRdKafka

#if canImport(Glibc)
    import Glibc
#endif

/// Owns one `rd_kafka_topic_partition_list_t` and destroys it in `deinit`.
/// Not `Sendable`: used on one thread at a time.
final class RDKafkaTopicPartitionList {
    private let list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    private let owned: Bool

    init(capacity: Int = 1) {
        self.list = rd_kafka_topic_partition_list_new(Int32(max(capacity, 1)))
        self.owned = true
    }

    /// Borrows a list owned by librdkafka (e.g. in a callback). It is not destroyed here.
    init(borrowing list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) {
        self.list = list
        self.owned = false
    }

    convenience init(_ partitions: [TopicPartition]) {
        self.init(capacity: partitions.count)
        for tp in partitions { add(tp, offset: .invalid) }
    }

    convenience init(_ offsets: [TopicPartitionOffset]) {
        self.init(capacity: offsets.count)
        for tpo in offsets { add(tpo.topicPartition, offset: tpo.offset, metadata: tpo.metadata) }
    }

    deinit {
        if owned { rd_kafka_topic_partition_list_destroy(list) }
    }

    func add(_ tp: TopicPartition, offset: KafkaOffset, metadata: String? = nil) {
        let element = rd_kafka_topic_partition_list_add(list, tp.topic, tp.partition)!
        element.pointee.offset = offset.rawValue
        if let metadata, !metadata.isEmpty {
            // librdkafka frees metadata with free() when the list is destroyed.
            let bytes = Array(metadata.utf8)
            let memory = malloc(bytes.count)!
            bytes.withUnsafeBytes { memory.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            element.pointee.metadata = memory
            element.pointee.metadata_size = bytes.count
        }
    }

    func withPointer<T>(_ body: (UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) throws -> T) rethrows -> T {
        try body(list)
    }

    var count: Int { Int(list.pointee.cnt) }

    /// The partitions as values.
    var partitions: [TopicPartition] { offsets.map(\.topicPartition) }

    /// The elements as values, with offsets and metadata.
    var offsets: [TopicPartitionOffset] {
        (0..<count).map { i in
            let e = list.pointee.elems[i]
            var metadata: String?
            if let raw = e.metadata, e.metadata_size > 0 {
                metadata = String(decoding: UnsafeRawBufferPointer(start: raw, count: e.metadata_size), as: UTF8.self)
            }
            return TopicPartitionOffset(
                TopicPartition(topic: String(cString: e.topic), partition: e.partition),
                offset: KafkaOffset(e.offset), metadata: metadata
            )
        }
    }

    /// The first per-partition error, if any element carries one.
    func firstError(context: String) -> KafkaError? {
        for i in 0..<count {
            let e = list.pointee.elems[i]
            if e.err != RD_KAFKA_RESP_ERR_NO_ERROR {
                let tp = TopicPartition(topic: String(cString: e.topic), partition: e.partition)
                return KafkaError(e.err, context: "\(context) \(tp)")
            }
        }
        return nil
    }
}
