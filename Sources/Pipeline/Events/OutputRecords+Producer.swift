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

extension RecordProducing {
    /// Writes `record` until Kafka acknowledges it: true. Each failure is passed to `failed`,
    /// then the write is retried after a backoff (100 ms, doubling to 5 s); false only when the
    /// task is cancelled first (the caller's work stays unfinished, never committed past).
    func writeUntilAcknowledged(_ record: KafkaProducerRecord, failed: (KafkaError) -> Void) async -> Bool {
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                _ = try await send(record)
                return true
            } catch {
                failed(error)
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, .seconds(5))
            }
        }
        return false
    }
}
