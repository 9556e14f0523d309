import CRdKafka
import Threading

extension RDKafkaConsumer {
    /// Called by librdkafka on the poll thread (inside `rd_kafka_consumer_poll` or
    /// `rd_kafka_consumer_close`). Runs the Swift handler to completion, then applies the change.
    func handleRebalance(_ rk: OpaquePointer, _ err: rd_kafka_resp_err_t, _ list: RDKafkaTopicPartitionList) {
        let partitions = list.partitions
        let cooperative = String(cString: rd_kafka_rebalance_protocol(rk)) == "COOPERATIVE"
        let handler = rebalanceHandler
        heardFromCluster()  // a rebalance: the group's coordinator answered

        switch err {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            DedicatedThread.runBlocking { await handler.onAssign(partitions) }
            resumeIfPaused(rk, partitions)  // a partition handed to this consumer starts unpaused
            let error: KafkaError? = list.withPointer { ptr in
                if cooperative {
                    return rd_kafka_incremental_assign(rk, ptr).map { KafkaError(consuming: $0, context: "incremental assign") }
                }
                let e = rd_kafka_assign(rk, ptr)
                return e == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(e, context: "assign")
            }
            if let error { errorHandler(error) }
            state.withLock { s in
                if !cooperative { s.assignment = [] }
                s.assignment.formUnion(partitions)
            }

        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            let lost = rd_kafka_assignment_lost(rk) != 0
            let revoked = Set(partitions)
            // Stop taking work for these partitions: undelivered messages are dropped here and
            // will be read again by the next owner from the committed offset.
            channel.removeAll { revoked.contains($0.topicPartition) }
            if lost {
                DedicatedThread.runBlocking { await handler.onLost(partitions) }
            } else {
                DedicatedThread.runBlocking { await handler.onRevoke(partitions) }
            }
            let error: KafkaError? = list.withPointer { ptr in
                if cooperative {
                    return rd_kafka_incremental_unassign(rk, ptr).map { KafkaError(consuming: $0, context: "incremental unassign") }
                }
                let e = rd_kafka_assign(rk, nil)
                return e == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(e, context: "unassign")
            }
            if let error { errorHandler(error) }
            resumeIfPaused(rk, partitions)  // after the unassign: their fetching has stopped
            state.withLock { s in
                if cooperative { s.assignment.subtract(revoked) } else { s.assignment = [] }
            }

        default:
            errorHandler(KafkaError(err, context: "rebalance"))
            _ = rd_kafka_assign(rk, nil)
            resumeIfPaused(rk, Array(state.withLock { $0.paused }))
            state.withLock { $0.assignment = [] }
        }
    }

    /// librdkafka keeps a partition paused across its revocation and re-assignment
    /// (confluentinc/librdkafka#1849): a partition paused when it was revoked or lost would never
    /// be fetched again once the group hands it back. So a partition the application paused is
    /// resumed once it is unassigned (and, should one slip through, before it is assigned
    /// again), when no fetch is under way. Partitions never paused are not touched: a resume
    /// bumps the partition's op version, which would restart a running fetch from its start.
    private func resumeIfPaused(_ rk: OpaquePointer, _ partitions: [TopicPartition]) {
        let paused = state.withLock { s in
            let hit = s.paused.intersection(partitions)
            s.paused.subtract(hit)
            return hit
        }
        guard !paused.isEmpty else { return }
        let err = RDKafkaTopicPartitionList(Array(paused)).withPointer { rd_kafka_resume_partitions(rk, $0) }
        if err != RD_KAFKA_RESP_ERR_NO_ERROR { errorHandler(KafkaError(err, context: "resume")) }
    }
}
