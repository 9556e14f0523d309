// Translation of the configuration structs into librdkafka properties.
import Threading

extension KafkaConsumerConfiguration {
    /// librdkafka properties, in the order they are applied.
    var rdKafkaProperties: [(key: String, value: String)] {
        var p: [(key: String, value: String)] = [
            ("bootstrap.servers", bootstrapServers.joined(separator: ",")),
            ("client.id", clientID),
            ("partition.assignment.strategy", assignmentStrategy.rawValue),
            ("session.timeout.ms", String(sessionTimeout.milliseconds)),
            ("heartbeat.interval.ms", String(heartbeatInterval.milliseconds)),
            ("max.poll.interval.ms", String(maxPollInterval.milliseconds)),
            ("auto.offset.reset", autoOffsetReset.rawValue),
            ("socket.timeout.ms", String(requestTimeout.milliseconds)),
            ("socket.connection.setup.timeout.ms", String(connectTimeout.milliseconds)),
            ("enable.auto.offset.store", "false"),
            ("enable.partition.eof", "false"),
        ]
        // librdkafka needs a group.id even for assign mode; a private one is never committed to
        // unless the caller commits.
        p.append(("group.id", groupID ?? "pushbridge-assign-\(UInt64.random(in: 0...UInt64.max))"))
        if let groupInstanceID { p.append(("group.instance.id", groupInstanceID)) }
        p += properties.forClient(.consumer)
        // Offsets are committed only by explicit calls: this is what at-least-once rests on.
        p.append(("enable.auto.commit", "false"))
        return p
    }
}

extension KafkaProducerConfiguration {
    var rdKafkaProperties: [(key: String, value: String)] {
        var p: [(key: String, value: String)] = [
            ("bootstrap.servers", bootstrapServers.joined(separator: ",")),
            ("client.id", clientID),
            ("enable.idempotence", enableIdempotence ? "true" : "false"),
            ("message.timeout.ms", String(deliveryTimeout.milliseconds)),
            ("linger.ms", String(linger.milliseconds)),
            ("socket.timeout.ms", String(requestTimeout.milliseconds)),
            ("socket.connection.setup.timeout.ms", String(connectTimeout.milliseconds)),
        ]
        p += properties.forClient(.producer)
        return p
    }
}

extension [String: String] {
    /// The raw properties a client of `kind` knows, sorted by name: a producer-only one is left
    /// out of a consumer's and the other way round (librdkafka's own table, ``RDKafkaPropertyScopes``),
    /// so one set of properties serves both clients without a `CONFWARN`.
    fileprivate func forClient(_ kind: RDKafkaClient.Kind) -> [(key: String, value: String)] {
        filter { RDKafkaPropertyScopes.applies($0.key, to: kind) }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
