/// Confluent's wire format: how a Schema Registry serializer frames a record value.
///
/// | bytes | meaning |
/// |---|---|
/// | 1 | magic byte `0` |
/// | 4 | the schema ID, big-endian |
/// | Protobuf only: varints | the message-index list (see ``messageIndexes(_:from:)``) |
/// | the rest | the Avro binary or Protobuf encoding |
///
/// Source: Confluent's "Wire format" section of the Schema Registry serdes documentation
/// (docs.confluent.io, schema-registry/fundamentals/serdes-develop). A JSON document never
/// starts with a 0 byte (RFC 8259 allows only whitespace before the value), so a framed record
/// is told from JSON by its first byte alone.
public struct ConfluentFrame: Sendable, Equatable {
    public var schemaID: UInt32
    /// Where the bytes after the 5-byte header start (for Protobuf, the index list comes first).
    public var bodyOffset: Int

    /// The frame of `bytes`, or nil when they do not start with the magic byte and a whole ID.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count >= 5, bytes[0] == 0 else { return nil }
        schemaID = UInt32(bytes[1]) << 24 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 8 | UInt32(bytes[4])
        bodyOffset = 5
    }

    /// `[0]`, shared: the common case is every record's, and a shared array costs no allocation.
    private static let firstMessage = [0]

    /// Whether `bytes` start like a framed record (the magic byte), whatever follows.
    public static func isFramed(_ bytes: [UInt8]) -> Bool { bytes.first == 0 }

    /// The Protobuf message-index list that follows the schema ID, and where the message starts.
    ///
    /// The list says which message of the schema's file the record is: a zigzag varint count,
    /// then that many zigzag varint indexes, the first into the file's top-level messages and
    /// each next into the previous message's nested ones. The common case, the file's first
    /// message, is written as the single byte `0` (a count of zero), meaning `[0]`.
    public static func messageIndexes(_ bytes: [UInt8], from offset: Int) throws(SchemaError) -> (indexes: [Int], bodyOffset: Int) {
        var at = offset
        let count = try zigzag(bytes, &at)
        guard count >= 0, count <= 100 else { throw SchemaError("message-index count \(count) at byte \(offset) is not a valid count") }
        if count == 0 { return (firstMessage, at) }
        var indexes: [Int] = []
        indexes.reserveCapacity(Int(count))
        for _ in 0..<count {
            let start = at
            let index = try zigzag(bytes, &at)
            guard index >= 0, index <= Int64(Int32.max) else { throw SchemaError("message index \(index) at byte \(start) is negative or too large") }
            indexes.append(Int(index))
        }
        return (indexes, at)
    }

    private static func zigzag(_ bytes: [UInt8], _ at: inout Int) throws(SchemaError) -> Int64 {
        let start = at
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard at < bytes.count else { throw SchemaError("the message-index list ends inside a varint at byte \(start)") }
            let byte = bytes[at]
            at += 1
            guard shift < 64 else { throw SchemaError("a varint longer than 10 bytes in the message-index list at byte \(start)") }
            result |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { break }
            shift += 7
        }
        return Int64(bitPattern: result >> 1) ^ -Int64(bitPattern: result & 1)
    }
}
