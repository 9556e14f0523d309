import JSON

/// An Avro writer schema, parsed once and used to decode every record written with it.
///
/// pushbridge reads records that Confluent's AvroSerializer framed (see ``ConfluentFrame``): the
/// Avro binary after the header is decoded with the writer's schema, fetched from the registry,
/// into the same ``JSONValue`` a JSON event would be, so mappings address both alike. Follows
/// the Avro 1.11 specification; aliases play no part in decoding and are ignored.
///
/// Value rules beyond plain Avro-to-JSON: a union gives its branch's value directly (no
/// `{"type": value}` wrapper), so `/field` reaches it; logical types give text (a decimal's exact
/// digits, RFC 3339 timestamps); bytes and fixed give base64.
public struct AvroSchema: Sendable {
    let nodes: [AvroNode]
    let root: Int
    /// The top-level named type's full name (`com.acme.OrderShipped`), nil for an unnamed top level.
    public let fullName: String?

    /// - Parameters:
    ///   - text: the schema JSON as the registry returns it.
    ///   - references: the texts of the schemas it references (Confluent schema references: each
    ///     defines named types the main schema uses by full name), dependencies before dependents.
    ///     A text repeated (a type two references share) is read once.
    public init(parsing text: String, references: [String] = []) throws(SchemaError) {
        var parser = AvroSchemaParser()
        var seen: Set<String> = []
        for (i, reference) in references.enumerated() where seen.insert(reference).inserted {
            _ = try parser.parseDocument(reference, label: "reference \(i + 1)")
        }
        let root = try parser.parseDocument(text, label: nil)
        parser.markEmptyTypes()
        nodes = parser.nodes
        self.root = root
        fullName = parser.nodes[root].fullName
    }

    /// The record's full name: the top-level type's, or, when the top level is a union (Confluent's
    /// way to put several event types on one topic, `["acme.OrderCreated", "acme.OrderShipped"]`,
    /// or `["null", "acme.Order"]`), the name of the branch this record took (its index is the
    /// first thing in the bytes). nil for an unnamed type.
    package func recordName(_ bytes: [UInt8], from offset: Int) -> String? {
        let node = nodes[root]
        guard node.kind == .union else { return fullName }
        let index = bytes.withUnsafeBufferPointer { buffer in
            nodes.withUnsafeBufferPointer { nodes in
                var decoder = AvroDecoder(bytes: buffer, nodes: nodes, at: offset)
                return try? decoder.varint(.unionIndex)
            }
        }
        guard let index, index >= 0, index < node.children.count else { return nil }
        return nodes[node.children[Int(index)]].fullName
    }

    /// Decodes the Avro binary that starts at `offset` and must end exactly at `bytes.count`
    /// (bytes left over is an error: the record does not match its schema).
    ///
    /// Only the members in `keeping` are built; the others are skipped, checked only as far as
    /// finding where they end takes. A failure names the field path and the byte offset in
    /// `bytes`: "field /items/2/price: a long runs past the end at byte 41".
    ///
    /// `package`, not `public`: ``JSONPathSet`` is a package type.
    package func decode(_ bytes: [UInt8], from offset: Int, keeping: JSONPathSet) throws(SchemaError) -> JSONValue {
        guard offset >= 0, offset <= bytes.count else {
            throw SchemaError("the Avro data would start at byte \(offset), outside the \(bytes.count) bytes of the record")
        }
        do {
            return try bytes.withUnsafeBufferPointer { (buffer) throws(DecodeFailure) -> JSONValue in
                try nodes.withUnsafeBufferPointer { (nodes) throws(DecodeFailure) -> JSONValue in
                    var decoder = AvroDecoder(bytes: buffer, nodes: nodes, at: offset)
                    let value = try decoder.value(root, keeping, depth: 0)
                    guard decoder.at == buffer.count else {
                        let left = buffer.count - decoder.at
                        throw DecodeFailure("\(left) byte\(left == 1 ? "" : "s") left over after the value", at: decoder.at)
                    }
                    return value
                }
            }
        } catch {
            let place = error.reversedPath.isEmpty ? "top level" : "field " + error.pointer
            throw SchemaError("\(place): \(error.reason) at byte \(error.offset)")
        }
    }
}
