import JSON

/// A schema as a Schema Registry hands it over: its type, its text, and the texts of the
/// schemas it references (Confluent's schema references), dependencies first.
public struct RegisteredSchema: Sendable, Equatable {
    /// The registry's `schemaType`; the registry omits it for Avro.
    public enum Kind: String, Sendable, Equatable {
        case avro = "AVRO"
        case protobuf = "PROTOBUF"
        case json = "JSON"
    }

    public var id: UInt32
    public var kind: Kind
    public var text: String
    /// Each referenced schema by its reference name (Avro: the full name of a type it defines;
    /// Protobuf: the import path), every level of references included, dependencies first.
    public var references: [Reference]

    public struct Reference: Sendable, Equatable {
        public var name: String
        public var text: String

        public init(name: String, text: String) {
            self.name = name
            self.text = text
        }
    }

    public init(id: UInt32, kind: Kind, text: String, references: [Reference] = []) {
        self.id = id
        self.kind = kind
        self.text = text
        self.references = references
    }
}

/// The schema a record was written with, ready to decode records.
///
/// JSON Schema records (`JSON`) carry a JSON document after the frame: it is parsed as JSON,
/// not validated against its schema (the producer's serializer did that).
public enum WriterSchema: Sendable {
    case avro(AvroSchema)
    case protobuf(ProtobufSchema)
    case json

    /// Reads `registered`; a schema that cannot be read is a permanent ``SchemaError``.
    public init(_ registered: RegisteredSchema) throws(SchemaError) {
        switch registered.kind {
        case .avro:
            self = .avro(try AvroSchema(parsing: registered.text, references: registered.references.map(\.text)))
        case .protobuf:
            self = .protobuf(try ProtobufSchema(schema: registered.text, references: registered.references.map { ($0.name, $0.text) }))
        case .json:
            self = .json
        }
    }

    public var kind: RegisteredSchema.Kind {
        switch self {
        case .avro: .avro
        case .protobuf: .protobuf
        case .json: .json
        }
    }

    /// Decodes the record `bytes` that `frame` was read from, building only what `keeping`
    /// names. Returns the value and the record's full type name (Avro's named top-level type, or
    /// the branch a top-level union took; Protobuf's message; nil for JSON).
    package func decode(_ bytes: [UInt8], frame: ConfluentFrame, keeping: JSONPathSet) throws(SchemaError) -> (value: JSONValue, recordName: String?)
    {
        switch self {
        case .avro(let schema):
            let value = try schema.decode(bytes, from: frame.bodyOffset, keeping: keeping)
            return (value, schema.recordName(bytes, from: frame.bodyOffset))
        case .protobuf(let schema):
            let (indexes, offset) = try ConfluentFrame.messageIndexes(bytes, from: frame.bodyOffset)
            let (value, name) = try schema.decode(bytes, from: offset, messageIndexes: indexes, keeping: keeping)
            return (value, name)
        case .json:
            do {
                return (try JSONParser.parse(Array(bytes[frame.bodyOffset...]), keeping: keeping), nil)
            } catch {
                throw SchemaError("the JSON after the schema ID is not valid: \(error)")
            }
        }
    }
}
