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
            let error: KafkaError? = list.withPointer { ptr in
                if cooperative {
                    return rd_kafka_incremental_assign(rk, ptr).map { KafkaError(consuming: $0, context: "incremental assign") }
                }
                let e = rd_kafka_assign(rk, ptr)
                return e == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(e, context: "assign")
            }
            if let error { errorHandler(error) }
            release(rk, partitions)  // a partition handed to this consumer starts unpaused
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
            state.withLock { s in
                if cooperative { s.assignment.subtract(revoked) } else { s.assignment = [] }
            }

        default:
            errorHandler(KafkaError(err, context: "rebalance"))
            _ = rd_kafka_assign(rk, nil)
            state.withLock { $0.assignment = [] }
        }
    }

    /// Forwards the queues of partitions just assigned to the consumer queue
    /// (``RDKafkaPartitionQueues``): librdkafka leaves that to the application for a queue the
    /// application once forwarded itself, i.e. one held by a pause before it was revoked.
    private func release(_ rk: OpaquePointer, _ partitions: [TopicPartition]) {
        for missing in RDKafkaPartitionQueues.release(rk, partitions) {
            errorHandler(KafkaError(code: .unknownTopicOrPartition, message: "assign: no queue for \(missing)"))
        }
    }
}
