import Kafka
import Logging
import Threading

extension RegistryFollower {
    /// Reads every partition of the topic from the stored offsets (or the beginning) and keeps
    /// following until the task is cancelled; then closes its consumer and returns.
    ///
    /// - Throws: ``RegistryError`` `.missingTopic` when the topic does not exist, `.otherTopic`
    ///   when the store was filled from another topic, `.kafka` for a consumer that cannot
    ///   start or fails fatally, and the store's errors (a file that cannot be written).
    ///
    /// Each call starts over: it reads the stored offsets again, and is caught up again once it
    /// has read what was there when it started.
    public func run() async throws(RegistryError) {
        let shared = self.shared
        shared.update { s in
            s.progress = RegistryProgress()
            s.ended = false
        }
        let consumer: KafkaConsumer
        do {
            consumer = try KafkaConsumer(
                configuration: consumerConfiguration,
                errorHandler: configuration.kafkaLogs?.errors ?? { @Sendable [logger] error in logger.warning("registry: kafka: \(error)") },
                logHandler: configuration.kafkaLogs?.lines ?? { @Sendable [logger] entry in
                    if entry.level <= 4 { logger.warning("registry: librdkafka \(entry.facility): \(entry.message)") }
                },
                endOfPartitionHandler: { shared.endOfPartition($0) })
        } catch {
            shared.update { $0.ended = true }
            throw RegistryError(code: .kafka, message: "cannot start the registry consumer: \(error)")
        }
        shared.state.withLock { $0.consumer = consumer }
        let outcome: Result<Void, RegistryError>
        do {
            try await start(consumer)
            try await follow(consumer)
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        shared.update {
            $0.consumer = nil
            $0.ended = true
        }
        await consumer.close()
        try outcome.get()
    }

    /// Finds the partitions, checks the store, reads the high watermarks and assigns.
    private func start(_ consumer: KafkaConsumer) async throws(RegistryError) {
        let partitions: [Int32]
        do {
            partitions = try await consumer.partitions(of: topic)
        } catch  where error.code == .unknownTopicOrPartition {
            throw RegistryError(code: .missingTopic, message: "the registry topic \(topic) does not exist")
        } catch {
            throw RegistryError(code: .kafka, message: "cannot read the partitions of \(topic): \(error)")
        }
        let others = try store.topics().filter { $0 != topic }
        guard others.isEmpty else {
            throw RegistryError(
                code: .otherTopic,
                message: "\(store.path) was filled from topic \(others.joined(separator: ", ")), not \(topic); delete it or use another file")
        }
        let stored = try store.offsets(topic: topic)
        var assignment: [TopicPartitionOffset] = []
        for p in partitions {
            let tp = TopicPartition(topic: topic, partition: p)
            var high: Int64?
            do {
                high = try await consumer.watermarks(for: tp, timeout: configuration.watermarkTimeout).high
            } catch {
                logger.warning("registry: no high watermark for \(tp) yet; lag is unknown until the end is read", metadata: ["error": "\(error)"])
            }
            let next = stored[p]
            shared.state.withLock { $0.progress.start(partition: p, next: next, high: high) }
            assignment.append(TopicPartitionOffset(tp, offset: next.map { KafkaOffset($0) } ?? .beginning))
        }
        logger.info(
            "registry: following \(topic)",
            metadata: [
                "partitions": "\(partitions.count)", "users": "\(store.userCount)", "devices": "\(store.deviceCount)",
                "resumed": "\(stored.isEmpty ? "no" : "yes")",
            ])
        do {
            try consumer.assign(assignment)
        } catch {
            throw RegistryError(code: .kafka, message: "cannot assign the partitions of \(topic): \(error)")
        }
    }

    /// Applies batches until the consumer ends (the task was cancelled).
    private func follow(_ consumer: KafkaConsumer) async throws(RegistryError) {
        var batch: [KafkaMessage] = []
        batch.reserveCapacity(configuration.maxBatch)
        var taken = 0
        var messages = consumer.messages.makeAsyncIterator()
        while true {
            let message: KafkaMessage?
            do {
                message = try await messages.next()
            } catch {
                throw RegistryError(code: .kafka, message: "the registry consumer failed: \(error)")
            }
            guard let message else { return }
            taken += 1
            batch.append(message)
            // Apply when the batch is full or nothing more is buffered right now.
            if batch.count >= configuration.maxBatch || taken >= consumer.messagesQueued {
                try await apply(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Parses a batch, applies it with its offsets in one transaction, then counts it.
    private func apply(_ batch: [KafkaMessage]) async throws(RegistryError) {
        var updates: [RegistryUpdate] = []
        updates.reserveCapacity(batch.count)
        var lastOffsets: [Int32: Int64] = [:]
        var invalid = 0
        var dropped: [String: Int] = [:]
        var logged = 0
        for m in batch {
            lastOffsets[m.partition] = m.offset
            switch RegistryRecord.parse(key: m.key, value: m.value.isEmpty ? nil : m.value) {
            case .success(let update):
                updates.append(update)
                for member in update.droppedPreferences {
                    dropped[member, default: 0] += 1
                    logged += 1
                    if logged <= configuration.invalidLogsPerBatch {
                        logger.warning(
                            "registry: a preference left out: its value is not one the format allows (docs/registry.md, Preferences)",
                            metadata: ["topic": "\(m.topic)", "partition": "\(m.partition)", "offset": "\(m.offset)", "member": "\(member)"])
                    }
                }
            case .failure(let error):
                invalid += 1
                if invalid <= configuration.invalidLogsPerBatch {
                    logger.warning(
                        "registry: record skipped",
                        metadata: ["topic": "\(m.topic)", "partition": "\(m.partition)", "offset": "\(m.offset)", "reason": "\(error.reason)"])
                }
            }
        }
        if invalid > configuration.invalidLogsPerBatch {
            logger.warning(
                "registry: \(invalid - configuration.invalidLogsPerBatch) more records skipped in this batch", metadata: ["topic": "\(topic)"])
        }
        var offsets = shared.state.withLock { $0.progress.takeUnstoredAdvances() }
        for (p, last) in lastOffsets { offsets[p] = max(offsets[p] ?? 0, last + 1) }
        let (store, topic, toApply, toStore) = (self.store, self.topic, updates, offsets)
        // SQLite writes block (and a checkpoint syncs the disk): not on the task pool.
        let result = await DedicatedThread.run { () -> Result<Void, RegistryError> in
            do throws(RegistryError) {
                try store.apply(toApply, offsets: toStore, topic: topic)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
        let valid = updates.count
        shared.update { s in
            s.applied += valid
            s.invalid += invalid
            s.droppedPreferences.merge(dropped, uniquingKeysWith: +)
            s.progress.applied(count: batch.count, lastOffsets: lastOffsets)
        }
    }
}
