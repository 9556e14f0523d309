/// Why a record's bytes could not be decoded, on its way out of the Avro or Protobuf decoder:
/// the reason, the byte where the failing value starts, and the field path. The path is gathered
/// as the error passes back out through each field, item and map entry (innermost first), so
/// decoding that succeeds never spends anything on it. Each decoder words it as a
/// ``SchemaError`` at its boundary.
struct DecodeFailure: Error {
    var reason: String
    var offset: Int
    /// JSON Pointer reference tokens (field names, indexes, map keys), innermost first.
    var reversedPath: [String] = []

    init(_ reason: String, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// This failure, as seen from the value that holds the member, item or entry `token`.
    func within(_ token: String) -> DecodeFailure {
        var failure = self
        failure.reversedPath.append(token)
        return failure
    }

    /// The path as a JSON Pointer (`/items/2/price`), empty at the top.
    var pointer: String { reversedPath.reversed().map { "/" + Self.escaped($0) }.joined() }

    /// RFC 6901: `~` is written `~0` and `/` is written `~1` inside a reference token.
    private static func escaped(_ token: String) -> String {
        guard token.contains("~") || token.contains("/") else { return token }
        return token.replacing("~", with: "~0").replacing("/", with: "~1")
    }
}
