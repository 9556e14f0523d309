/// Reads `.proto` source text (proto2 and proto3) into a ``ProtoFile`` with every type name
/// resolved to its full name.
public enum ProtoTextParser {
    /// - Parameters:
    ///   - name: the import path the file is known by.
    ///   - imports: the files it imports (already parsed), for resolving the names it uses.
    public static func parse(_ text: String, name: String, imports: [ProtoFile]) throws(SchemaError) -> ProtoFile {
        throw SchemaError(".proto text is not supported yet")
    }
}
