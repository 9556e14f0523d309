import Mapping

/// Maps a typical event (decode → map → request body bytes) `events` times on one core.
enum MappingBenchmark {
    static let mapping = """
        version: 1
        event: {type: /type, id: /id}
        events:
          message.received:
            target: {token: {field: /recipient/fcm_token}}
            title: {key: new_message_title, args: [{field: /sender/name}]}
            body: {key: new_message_body, args: [{field: /unread_count}, {field: /sender/name}]}
            priority: high
            collapse_key: {field: /chat_id}
            replace_id: {from: event_id}
            android: {channel_id: messages}
            apns: {badge: {field: /unread_count}, thread_id: {field: /chat_id}, sound: default}
            data: {chat_id: {field: /chat_id}, screen: chat}
        """

    static let event = Array(
        """
        {"type":"message.received","id":"3f0c9a1e-5b7d-4c2a-9e61-0d2b8f4a7c13","occurred_at":"2026-11-22T10:15:00Z",
         "unread_count":3,"chat_id":"chat-8841","sender":{"id":"u-17","name":"Bob"},
         "recipient":{"id":"u-42","fcm_token":"bk3RNwTe3H0:CI2k_HHwgIpoDKCIZvvDMExUdFQ3P1-JzmJ6PrqB1xq3Yb9e0"}}
        """.utf8)

    /// The same event to a user (`/recipient/id`), for mappings with a `user` target.
    static let userEvent = Array(
        """
        {"type":"message.received","id":"3f0c9a1e-5b7d-4c2a-9e61-0d2b8f4a7c13","occurred_at":"2026-11-22T10:15:00Z",
         "unread_count":3,"chat_id":"chat-8841","sender":{"id":"u-17","name":"Bob"},"recipient":{"id":"u-42"}}
        """.utf8)

    /// The event's bytes in `format` (json, avro or protobuf), and the writer schema it needs.
    static func input(_ format: String) throws -> (value: [UInt8], schema: WriterSchema?) {
        switch format {
        case "json": return (event, nil)
        case "avro":
            let schema = try WriterSchema(RegisteredSchema(id: 1, kind: .avro, text: SchemaRecordEncoding.avroSchema))
            return (SchemaRecordEncoding.avro(), schema)
        case "protobuf":
            let schema = try WriterSchema(RegisteredSchema(id: 1, kind: .protobuf, text: SchemaRecordEncoding.protoSchema))
            return (SchemaRecordEncoding.protobuf(), schema)
        default: throw BenchError("--format is json, avro or protobuf")
        }
    }

    /// Runs `rounds` rounds of `events` after a warm-up round (only that one if `rounds` is 0),
    /// and reports the median round:
    /// this machine's speed varies by ±20% from one second to the next. `format`: the same
    /// event as JSON, or as Confluent's Avro or Protobuf serializer writes it (its schema
    /// already fetched, as a worker's cache holds it).
    static func run(events: Int, rounds: Int = 5, format: String = "json") throws -> [(name: String, value: Double)] {
        let set = try MappingSet.load(files: [("bench.yaml", mapping)])
        let (value, schema) = try input(format)
        var rates: [Double] = []
        for round in 0...rounds {
            var bytes = 0
            let start = ContinuousClock.now
            for i in 0..<events {
                let record = EventRecord(value: value, topic: "events", partition: 0, offset: Int64(i))
                guard case .success(let rendered) = set.render(record, schema: schema) else { throw BenchError("mapping failed") }
                for m in rendered.messages { bytes += m.requestBody().count }
            }
            let seconds = KafkaBenchmark.seconds(ContinuousClock.now - start)
            precondition(bytes > 0)
            if round > 0 || rounds == 0 { rates.append(Double(events) / seconds) }
        }
        rates.sort()
        let median = rates[rates.count / 2]
        let name = format == "json" ? "mapping" : "mapping_\(format)"
        return [
            ("\(name)_events_per_second", median),
            ("\(name)_events_per_second_best", rates.last!),
            ("\(name)_microseconds_per_event", 1e6 / median),
        ]
    }
}
