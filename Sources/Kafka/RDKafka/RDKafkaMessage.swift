import CRdKafka

/// Copies a librdkafka message into a Swift value. The caller still owns and destroys `message`.
enum RDKafkaMessage {
    static func copy(_ message: UnsafeMutablePointer<rd_kafka_message_t>, topic: String) -> KafkaMessage {
        let m = message.pointee
        var key: [UInt8]?
        if let k = m.key {
            key = Array(UnsafeRawBufferPointer(start: k, count: m.key_len))
        }
        var value: [UInt8] = []
        if let v = m.payload, m.len > 0 {
            value = Array(UnsafeRawBufferPointer(start: v, count: m.len))
        }
        var headers: [KafkaHeader] = []
        var hdrs: OpaquePointer?
        if rd_kafka_message_headers(message, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR, let hdrs {
            var index = 0
            var name: UnsafePointer<CChar>?
            var val: UnsafeRawPointer?
            var size = 0
            while rd_kafka_header_get_all(hdrs, index, &name, &val, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                let bytes = val.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) }
                headers.append(KafkaHeader(name: String(cString: name!), value: bytes))
                index += 1
            }
        }
        var tsType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let ts = rd_kafka_message_timestamp(message, &tsType)
        let timestamp: KafkaTimestamp? =
            switch tsType {
            case RD_KAFKA_TIMESTAMP_CREATE_TIME: KafkaTimestamp(milliseconds: ts, kind: .createTime)
            case RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME: KafkaTimestamp(milliseconds: ts, kind: .logAppendTime)
            default: nil
            }
        return KafkaMessage(
            topic: topic, partition: m.partition, offset: m.offset, key: key, value: value,
            headers: headers, timestamp: timestamp
        )
    }
}

/// Owns an `rd_kafka_headers_t` until it is handed to librdkafka with ``release()``.
final class RDKafkaHeaders {
    private var headers: OpaquePointer?

    init?(_ values: [KafkaHeader]) {
        guard !values.isEmpty else { return nil }
        let h = rd_kafka_headers_new(values.count)!
        for header in values {
            if let v = header.value {
                _ = v.withUnsafeBytes { rd_kafka_header_add(h, header.name, -1, $0.baseAddress, $0.count) }
            } else {
                _ = rd_kafka_header_add(h, header.name, -1, nil, 0)
            }
        }
        self.headers = h
    }

    /// The pointer, still owned by this object.
    var pointer: OpaquePointer? { headers }

    /// Gives up ownership (librdkafka took the headers).
    func release() { headers = nil }

    deinit {
        if let headers { rd_kafka_headers_destroy(headers) }
    }
}
