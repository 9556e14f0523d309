import Kafka

extension RegistryFollower {
    /// How far a registry file is behind its topic, for one partition.
    public struct PartitionLag: Sendable, Equatable {
        public var partition: Int32
        /// The next offset the file would read; nil when it has read nothing of this partition.
        public var next: Int64?
        /// The partition's high watermark.
        public var end: Int64
        /// Records between them (the whole partition when nothing was read).
        public var lag: Int64 { max(0, end - (next ?? 0)) }

        public init(partition: Int32, next: Int64?, end: Int64) {
            self.partition = partition
            self.next = next
            self.end = end
        }
    }

    /// Compares the offsets stored in `store` with the topic's high watermarks, without
    /// following: for `pushbridge registry` beside a running worker (whose file it opens
    /// read-only). A running follower's own ``lag`` needs no broker round trip.
    ///
    /// - Important: tansu answers high watermarks wrongly (too low); the mock cluster and Kafka
    ///   answer them right.
    /// - Throws: ``RegistryError`` `.missingTopic`, `.kafka` when the broker does not answer,
    ///   or the store's errors.
    public static func lag(
        topic: String, store: RegistryStore, bootstrapServers: [String], properties: [String: String],
        timeout: Duration = .seconds(10)
    ) async throws(RegistryError) -> [PartitionLag] {
        var configuration = KafkaConsumerConfiguration(bootstrapServers: bootstrapServers)
        configuration.clientID = "pushbridge-registry"
        configuration.properties = properties
        let consumer: KafkaConsumer
        do {
            consumer = try KafkaConsumer(configuration: configuration)
        } catch {
            throw RegistryError(code: .kafka, message: "cannot start a consumer: \(error)")
        }
        let result: Result<[PartitionLag], RegistryError>
        do throws(RegistryError) {
            let stored = try store.offsets(topic: topic)
            let partitions: [Int32]
            do {
                partitions = try await consumer.partitions(of: topic, timeout: timeout)
            } catch  where error.code == .unknownTopicOrPartition {
                throw RegistryError(code: .missingTopic, message: "the registry topic \(topic) does not exist")
            } catch {
                throw RegistryError(code: .kafka, message: "cannot read the partitions of \(topic): \(error)")
            }
            var lags: [PartitionLag] = []
            for p in partitions {
                do {
                    let high = try await consumer.watermarks(for: TopicPartition(topic: topic, partition: p), timeout: timeout).high
                    lags.append(PartitionLag(partition: p, next: stored[p], end: high))
                } catch {
                    throw RegistryError(code: .kafka, message: "no high watermark for \(topic)[\(p)]: \(error)")
                }
            }
            result = .success(lags)
        } catch {
            result = .failure(error)
        }
        await consumer.close()
        return try result.get()
    }
}
