import RecordDecoding

/// How a topic's record values are read (`kafka.value_formats`).
///
/// `auto`, the default, tells the two kinds apart by the first byte: Confluent's serializers
/// start every value with the magic byte 0, which JSON never starts with (RFC 8259 allows only
/// whitespace before a value). The others insist on one kind, so that a record of the wrong
/// kind is dead-lettered with that reason rather than read as something it is not.
public enum ValueFormat: String, Sendable, Equatable, CaseIterable {
    case auto
    /// Plain JSON or CloudEvents.
    case json
    /// Confluent's Avro serializer: magic byte, schema ID, Avro binary.
    case avro
    /// Confluent's Protobuf serializer: magic byte, schema ID, message indexes, Protobuf binary.
    case protobuf

    /// How `value` is encoded, or why it cannot be read as this format says.
    public func encoding(of value: [UInt8], topic: String) -> Result<ValueEncoding, MappingFailure> {
        switch self {
        case .json:
            return .success(.json)
        case .auto where !ConfluentFrame.isFramed(value):
            return .success(.json)
        case .avro where !ConfluentFrame.isFramed(value), .protobuf where !ConfluentFrame.isFramed(value):
            return .failure(
                .wrongValueFormat(
                    "topic \(topic) is read as \(rawValue) (kafka.value_formats), and this value does not start with the Schema Registry's magic byte 0"
                ))
        case .auto, .avro, .protobuf:
            guard let frame = ConfluentFrame(value) else {
                return .failure(
                    .undecodable(
                        "the value starts with the Schema Registry's magic byte 0 but is \(value.count) bytes long, too short for a schema ID"))
            }
            return .success(.schemaRegistry(frame))
        }
    }

    /// Whether a record written with `schema` may be read as this format says.
    public func admits(_ schema: RegisteredSchema.Kind, topic: String) -> MappingFailure? {
        switch (self, schema) {
        case (.avro, .avro), (.protobuf, .protobuf), (.auto, _): nil
        default:
            .wrongValueFormat(
                "topic \(topic) is read as \(rawValue) (kafka.value_formats), and this record's schema is \(schema.rawValue)")
        }
    }
}

/// What a record value needs before it can be decoded.
public enum ValueEncoding: Sendable, Equatable {
    /// JSON or CloudEvents: decoded as is.
    case json
    /// Framed by a Schema Registry serializer: its writer schema comes from the registry.
    case schemaRegistry(ConfluentFrame)
}
