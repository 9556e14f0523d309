import Mapping

/// The mapping bench's event as Confluent's Avro and Protobuf serializers frame it, so decode +
/// map is measured for each format on the same content. Encoded here by the formats' documented
/// rules (Avro 1.11 binary encoding; Protobuf's wire format): the bench needs no registry and no
/// Python, and RecordDecodingTests hold the decoders to bytes made by the real libraries.
enum SchemaRecordEncoding {
    static let avroSchema = """
        {"type": "record", "name": "MessageReceived", "namespace": "chat", "fields": [
          {"name": "type", "type": "string"}, {"name": "id", "type": "string"},
          {"name": "occurred_at", "type": "string"}, {"name": "unread_count", "type": "int"},
          {"name": "chat_id", "type": "string"},
          {"name": "sender", "type": {"type": "record", "name": "Person", "fields": [
            {"name": "id", "type": "string"}, {"name": "name", "type": "string"}]}},
          {"name": "recipient", "type": {"type": "record", "name": "Recipient", "fields": [
            {"name": "id", "type": "string"}, {"name": "fcm_token", "type": "string"}]}}]}
        """

    static let protoSchema = """
        syntax = "proto3";
        package chat;
        message MessageReceived {
          string type = 1;
          string id = 2;
          string occurred_at = 3;
          int32 unread_count = 4;
          string chat_id = 5;
          Person sender = 6;
          Recipient recipient = 7;
        }
        message Person { string id = 1; string name = 2; }
        message Recipient { string id = 1; string fcm_token = 2; }
        """

    struct Event {
        var type = "message.received", id = "3f0c9a1e-5b7d-4c2a-9e61-0d2b8f4a7c13", occurredAt = "2026-11-22T10:15:00Z"
        var unreadCount: Int64 = 3
        var chatID = "chat-8841", senderID = "u-17", senderName = "Bob"
        var recipientID = "u-42", token = "bk3RNwTe3H0:CI2k_HHwgIpoDKCIZvvDMExUdFQ3P1-JzmJ6PrqB1xq3Yb9e0"
    }

    static let frame: [UInt8] = [0, 0, 0, 0, 1]

    static func avro(_ e: Event = Event()) -> [UInt8] {
        var out = frame
        func long(_ v: Int64) {
            var z = UInt64(bitPattern: (v << 1) ^ (v >> 63))
            while z >= 0x80 {
                out.append(UInt8(z & 0x7f) | 0x80)
                z >>= 7
            }
            out.append(UInt8(z))
        }
        func string(_ s: String) {
            long(Int64(s.utf8.count))
            out += s.utf8
        }
        for s in [e.type, e.id, e.occurredAt] { string(s) }
        long(e.unreadCount)
        for s in [e.chatID, e.senderID, e.senderName, e.recipientID, e.token] { string(s) }
        return out
    }

    static func protobuf(_ e: Event = Event()) -> [UInt8] {
        func varint(_ v: UInt64, _ out: inout [UInt8]) {
            var v = v
            while v >= 0x80 {
                out.append(UInt8(v & 0x7f) | 0x80)
                v >>= 7
            }
            out.append(UInt8(v))
        }
        func field(_ number: UInt64, _ bytes: [UInt8], _ out: inout [UInt8]) {
            varint(number << 3 | 2, &out)
            varint(UInt64(bytes.count), &out)
            out += bytes
        }
        func pair(_ a: String, _ b: String) -> [UInt8] {
            var m: [UInt8] = []
            field(1, Array(a.utf8), &m)
            field(2, Array(b.utf8), &m)
            return m
        }
        var body: [UInt8] = []
        field(1, Array(e.type.utf8), &body)
        field(2, Array(e.id.utf8), &body)
        field(3, Array(e.occurredAt.utf8), &body)
        varint(4 << 3, &body)
        varint(UInt64(bitPattern: e.unreadCount), &body)
        field(5, Array(e.chatID.utf8), &body)
        field(6, pair(e.senderID, e.senderName), &body)
        field(7, pair(e.recipientID, e.token), &body)
        return frame + [0] + body  // [0]: the message-index list of the file's first message
    }
}
