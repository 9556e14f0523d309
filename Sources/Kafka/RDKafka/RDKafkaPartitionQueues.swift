import CRdKafka

/// Flow control by where a partition's fetch queue forwards to, in place of
/// `rd_kafka_pause_partitions` and `rd_kafka_resume_partitions`.
///
/// Each assigned partition has its own queue of fetched messages, which librdkafka forwards to
/// the consumer queue that `rd_kafka_consumer_poll` serves. *Held*, a partition's queue forwards
/// nowhere: what it fetches stays in it, and librdkafka stops fetching more once it holds
/// `queued.min.messages` or `queued.max.messages.kbytes` (it looks again every
/// `fetch.queue.backoff.ms`). *Released*, the queue forwards again, the messages it held first.
///
/// Why not pause: a resume does not wake the broker thread (`rd_kafka_toppar_pause_resume` in
/// rdkafka_partition.c calls no `rd_kafka_broker_wakeup`, where a fetch start does). With every
/// partition paused, that thread sleeps out its 1 s loop (`rd_kafka_max_block_ms`) and only then
/// fetches the resumed partitions, and a pause has dropped what they had fetched: the worker ran
/// dry after each resume (measured in docs/benchmarks-history.md).
///
/// librdkafka forwards a partition's queue when it starts fetching it, unless the application
/// has ever forwarded that queue itself (`RD_KAFKA_Q_F_FWD_APP`), and a fetch stop (revoke,
/// unassign) clears the forwarding. So once held, a partition is forwarded by us from then
/// on: ``release(_:_:)`` runs for every partition the consumer is assigned. librdkafka serves
/// an assignment's additions only after its earlier stops have completed, so that forwarding
/// is never undone by a stop still under way.
///
/// Each `rd_kafka_queue_t` is a reference taken and given back within one call.
enum RDKafkaPartitionQueues {
    /// Holds these partitions' fetched messages. Returns those librdkafka has no queue for.
    static func hold(_ rk: OpaquePointer, _ partitions: [TopicPartition]) -> [TopicPartition] {
        partitions.filter { !forward($0, to: nil, rk) }
    }

    /// Forwards these partitions' queues to the consumer queue again (the main queue for a
    /// consumer in no group, as librdkafka does). Returns those librdkafka has no queue for.
    static func release(_ rk: OpaquePointer, _ partitions: [TopicPartition]) -> [TopicPartition] {
        guard let consumer = rd_kafka_queue_get_consumer(rk) ?? rd_kafka_queue_get_main(rk) else { return partitions }
        defer { rd_kafka_queue_destroy(consumer) }
        return partitions.filter { !forward($0, to: consumer, rk) }
    }

    private static func forward(_ partition: TopicPartition, to destination: OpaquePointer?, _ rk: OpaquePointer) -> Bool {
        guard let queue = rd_kafka_queue_get_partition(rk, partition.topic, partition.partition) else { return false }
        defer { rd_kafka_queue_destroy(queue) }
        rd_kafka_queue_forward(queue, destination)
        return true
    }
}
