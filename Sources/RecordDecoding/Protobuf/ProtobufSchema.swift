import JSON

/// A Protobuf writer schema from a Schema Registry, ready to decode records that Confluent's
/// ProtobufSerializer framed (magic byte, schema ID, message indexes, then the message).
///
/// The schema and each reference may be a base64 serialized `FileDescriptorProto` or `.proto`
/// source (see ``ProtoSchemaLoader`` for how they are told apart). The imports serializers never
/// register are built in and need no reference: `google/protobuf/*.proto` (the well-known types,
/// and those Confluent's registry knows), `google/type/*.proto` and Confluent's decimal and
/// metadata (``ProtoSchemaLoader/builtIn(_:)``). Decoded records follow
/// ``ProtoMessageDecoder``: field names as declared in the `.proto` (`order_id`, not `orderId`),
/// the well-known types as the proto3 JSON mapping writes them.
public struct ProtobufSchema: Sendable {
    let types: ProtoTypeTable

    /// - Parameters:
    ///   - schema: the writer schema's text.
    ///   - references: import path → schema text, for every file the schema imports, directly
    ///     or not. Texts that no import reaches are not read.
    public init(schema: String, references: [(name: String, text: String)] = []) throws(SchemaError) {
        var loader = ProtoSchemaLoader(references: references)
        let main = try loader.loadMain(schema)
        types = try ProtoTypeTable.build(main: main, imports: loader.files)
    }

    /// The full name (`acme.orders.OrderShipped`, no leading dot) of the message the indexes name.
    public func messageName(at indexes: [Int]) throws(SchemaError) -> String {
        types.messages[try messageIndex(indexes)].fullName
    }

    /// Decodes the message that `indexes` name from `bytes[offset...]` to the end, building only
    /// what `keeping` reaches.
    package func decode(
        _ bytes: [UInt8], from offset: Int, messageIndexes: [Int], keeping: JSONPathSet = .all
    ) throws(SchemaError) -> (
        value: JSONValue, messageName: String
    ) {
        let index = try messageIndex(messageIndexes)
        let name = types.messages[index].fullName
        guard offset >= 0, offset <= bytes.count else {
            throw SchemaError("\(name): the message would start at byte \(offset) of a \(bytes.count)-byte record")
        }
        do {
            let value = try bytes.withUnsafeBufferPointer { (buffer) throws(DecodeFailure) -> JSONValue in
                let decoder = ProtoMessageDecoder(bytes: buffer, types: types)
                let paths = keeping.whole ? nil : keeping
                return try decoder.message(index, spans: ProtoSpans(first: offset..<buffer.count), keeping: paths, depth: 1)
            }
            return (value, name)
        } catch {
            let field = error.reversedPath.isEmpty ? "" : " field \(error.pointer)"
            throw SchemaError("\(name)\(field) at byte \(error.offset): \(error.reason)")
        }
    }

    /// Confluent's rule: the first index counts the schema file's top-level messages, each next
    /// one the previous message's nested messages (map entries included, as declared). An empty
    /// list means `[0]`, as the wire's count of zero does.
    func messageIndex(_ indexes: [Int]) throws(SchemaError) -> Int {
        var candidates = types.roots
        var current = -1
        for (position, index) in (indexes.isEmpty ? [0] : indexes).enumerated() {
            guard index >= 0, index < candidates.count else {
                let scope = current < 0 ? "the schema's file has" : "\(types.messages[current].fullName) has"
                throw SchemaError(
                    "message indexes \(indexes): index \(index) at position \(position) is out of range (\(scope) \(candidates.count) message(s) there)"
                )
            }
            current = candidates[index]
            candidates = types.messages[current].nested
        }
        return current
    }
}
