/// Why decoding stopped, on its way out to ``AvroSchema/decode(_:from:keeping:)``.
///
/// The path is gathered as the error passes back out through each record field, array item and
/// map entry (innermost first), so decoding that succeeds never spends anything on it.
struct AvroFailure: Error {
    var reason: String
    /// Where in the bytes the value that failed starts.
    var offset: Int
    /// JSON Pointer reference tokens, innermost first.
    var reversedPath: [String] = []

    init(_ reason: String, _ offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    /// This failure, as seen from the value that holds the member or item `token`.
    func inside(_ token: String) -> AvroFailure {
        var failure = self
        failure.reversedPath.append(token)
        return failure
    }

    /// "field /items/2/price: a long runs past the end at byte 41".
    var schemaError: SchemaError {
        let place = reversedPath.isEmpty ? "top level" : "field " + reversedPath.reversed().map { "/" + Self.escaped($0) }.joined()
        return SchemaError("\(place): \(reason) at byte \(offset)")
    }

    /// RFC 6901: `~` is written `~0` and `/` is written `~1` inside a reference token.
    private static func escaped(_ token: String) -> String {
        guard token.contains("~") || token.contains("/") else { return token }
        return token.replacing("~", with: "~0").replacing("/", with: "~1")
    }
}
