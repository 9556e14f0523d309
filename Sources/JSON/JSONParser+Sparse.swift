// The sparse reading: members no path asks for are checked exactly as a full parse checks
// them, and skipped without building anything (``JSONParser/parse(_:keeping:)``).
extension JSONParser.Reader {
    /// An object of which only the members in `paths` are built.
    mutating func sparseObject(depth: Int, keeping paths: JSONPathSet) throws(JSONParser.Error) -> JSONValue {
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        members.reserveCapacity(paths.members.count)
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let keyStart = index + 1
            let keyEnd = skipString()
            let wanted: JSONPathSet?
            var key: String?
            if let keyEnd {
                wanted = paths.member(UnsafeBufferPointer(rebasing: bytes[keyStart..<keyEnd]))
            } else {
                // Escapes or non-ASCII: decode (and validate) the name the slow way.
                index = keyStart - 1
                let decoded = try string()
                key = decoded
                wanted = Array(decoded.utf8).withUnsafeBufferPointer { paths.member($0) }
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            if let wanted {
                let name = key ?? String(decoding: UnsafeBufferPointer(rebasing: bytes[keyStart..<keyEnd!]), as: UTF8.self)
                members.append((name, try value(depth: depth + 1, keeping: wanted)))
            } else {
                try skipValue(depth: depth + 1)
            }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input in an object") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                throw error("expected ',' or '}'")
            }
        }
    }

    /// Checks a value exactly as ``value(depth:keeping:)`` would, building nothing.
    mutating func skipValue(depth: Int) throws(JSONParser.Error) {
        guard depth < Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth)") }
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let close = bytes[index] == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
            let isObject = close == UInt8(ascii: "}")
            index += 1
            skipWhitespace()
            if index < bytes.count, bytes[index] == close {
                index += 1
                return
            }
            while true {
                skipWhitespace()
                if isObject {
                    guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
                    try skipStringValue()
                    skipWhitespace()
                    guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
                    index += 1
                    skipWhitespace()
                }
                try skipValue(depth: depth + 1)
                skipWhitespace()
                guard index < bytes.count else {
                    throw error(isObject ? "unexpected end of input in an object" : "unexpected end of input in an array")
                }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == close {
                    index += 1
                    return
                } else {
                    throw error(isObject ? "expected ',' or '}'" : "expected ',' or ']'")
                }
            }
        case UInt8(ascii: "\""): try skipStringValue()
        default: _ = try value(depth: depth)  // scalars build no storage
        }
    }

    /// Skips a string at `index`, checking it as ``string()`` does.
    mutating func skipStringValue() throws(JSONParser.Error) {
        let start = index
        if skipString() == nil {
            index = start
            _ = try string()
        }
    }

    /// Fast path for a string of printable ASCII without escapes: moves past the closing
    /// quote and returns the end of its contents. Returns nil (index undefined) otherwise.
    mutating func skipString() -> Int? {
        index += 1
        while index < bytes.count {
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                index += 1
                return index - 1
            }
            if b == UInt8(ascii: "\\") || b < 0x20 || b >= 0x80 { return nil }
            index += 1
        }
        return nil
    }
}
