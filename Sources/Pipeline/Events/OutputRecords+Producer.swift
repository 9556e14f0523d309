import Kafka

extension OutputRecords {
    /// The producer the pipeline writes dead-letter and token-invalidation records with. An
    /// event whose record this producer has acknowledged counts as done, so the acknowledgement
    /// must mean the record is stored:
    ///
    /// - `acks=all`: every in-sync replica has it (the config refuses any other `acks`).
    /// - No idempotence. An idempotent producer that retries a batch after a broker restart takes
    ///   the answer DUPLICATE_SEQUENCE_NUMBER as success, without an offset. A broker that saved
    ///   the batch's sequence number but not the batch (tansu 0.6 killed between the two writes)
    ///   thereby acknowledges records it never stored, and the event would be committed past
    ///   (docs/reliability.md). Without idempotence a retry is a new write: the worst case is a
    ///   duplicate dead-letter record, never a missing one.
    ///
    /// `properties` (the config's `kafka.properties`: SASL, TLS, …) are applied on top.
    public static func producerConfiguration(brokers: [String], properties: [String: String]) -> KafkaProducerConfiguration {
        var configuration = KafkaProducerConfiguration(bootstrapServers: brokers)
        configuration.enableIdempotence = false
        configuration.properties = properties
        configuration.properties["acks"] = "all"
        return configuration
    }
}
