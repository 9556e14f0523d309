/// A strict JSON parser (RFC 8259) for event payloads.
///
/// Written for speed on small documents and for exact number handling: integers stay `Int64`.
public enum JSONParser {
    public struct Error: Swift.Error, Sendable, CustomStringConvertible {
        /// Byte offset of the problem.
        public let offset: Int
        public let reason: String
        public var description: String { "\(reason) at byte \(offset)" }
    }

    public static func parse(_ bytes: [UInt8]) throws(Error) -> JSONValue {
        try parse(bytes, keeping: .all)
    }

    /// Parses and checks the whole document, but builds only the parts in `paths`: other
    /// members are validated and skipped. The result is the document with those members left out.
    package static func parse(_ bytes: [UInt8], keeping paths: JSONPathSet) throws(Error) -> JSONValue {
        try read(bytes, keeping: paths, recordingMembers: false).value
    }

    /// Parses as `parse(_:)` does, and says where each object member's name starts: the member's
    /// pointer and the byte offset of its opening quote, in document order (a repeated name
    /// each time). For messages that point into a file.
    public static func parseWithMemberOffsets(_ bytes: [UInt8]) throws(Error) -> (value: JSONValue, members: [MemberOffset]) {
        let (value, members) = try read(bytes, keeping: .all, recordingMembers: true)
        return (value, members ?? [])
    }

    /// Where a member's name starts: the byte offset of its opening quote.
    public typealias MemberOffset = (pointer: JSONPointer, offset: Int)

    private static func read(
        _ bytes: [UInt8], keeping paths: JSONPathSet, recordingMembers: Bool
    ) throws(Error) -> (value: JSONValue, members: [MemberOffset]?) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(Error) -> (value: JSONValue, members: [MemberOffset]?) in
            var reader = Reader(bytes: buffer)
            if recordingMembers { reader.memberOffsets = [] }
            reader.skipWhitespace()
            let value = try reader.value(depth: 0, keeping: paths)
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw reader.error("unexpected data after the JSON value") }
            return (value, reader.memberOffsets)
        }
    }

    public static func parse(_ text: String) throws(Error) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// The cursor over a document; the sparse reading is in JSONParser+Sparse.swift.
    struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        static let maxDepth = 128
        /// Where each member's name starts, when recording (``parseWithMemberOffsets(_:)``).
        var memberOffsets: [MemberOffset]?
        /// The tokens down to the value being read, while recording.
        var path: [String] = []

        func error(_ reason: String) -> Error { Error(offset: index, reason: reason) }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int, keeping paths: JSONPathSet = .all) throws(Error) -> JSONValue {
            guard depth < Self.maxDepth else { throw error("nesting deeper than \(Self.maxDepth)") }
            guard index < bytes.count else { throw error("unexpected end of input") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return paths.whole ? try object(depth: depth) : try sparseObject(depth: depth, keeping: paths)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw error("unexpected character '\(Character(Unicode.Scalar(bytes[index])))'")
            }
        }

        /// A member's or an item's value, read with `token` on the path; a member's name offset
        /// is recorded under its pointer.
        mutating func recordedValue(token: String, nameOffset: Int?, depth: Int) throws(Error) -> JSONValue {
            path.append(token)
            defer { path.removeLast() }
            if let nameOffset { memberOffsets?.append((JSONPointer(tokens: path), nameOffset)) }
            return try value(depth: depth)
        }

        mutating func literal(_ word: StaticString) throws(Error) {
            let n = word.utf8CodeUnitCount
            guard index + n <= bytes.count else { throw error("unexpected end of input") }
            for i in 0..<n where bytes[index + i] != word.utf8Start[i] { throw error("invalid literal") }
            index += n
        }

        mutating func object(depth: Int) throws(Error) -> JSONValue {
            index += 1
            var members: [(key: String, value: JSONValue)] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
                let nameOffset = index
                let key = try string()
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
                index += 1
                skipWhitespace()
                if memberOffsets != nil {
                    members.append((key, try recordedValue(token: key, nameOffset: nameOffset, depth: depth + 1)))
                } else {
                    members.append((key, try value(depth: depth + 1)))
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

        mutating func array(depth: Int) throws(Error) -> JSONValue {
            index += 1
            var items: [JSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                skipWhitespace()
                if memberOffsets != nil {
                    items.append(try recordedValue(token: String(items.count), nameOffset: nil, depth: depth + 1))
                } else {
                    items.append(try value(depth: depth + 1))
                }
                skipWhitespace()
                guard index < bytes.count else { throw error("unexpected end of input in an array") }
                if bytes[index] == UInt8(ascii: ",") {
                    index += 1
                } else if bytes[index] == UInt8(ascii: "]") {
                    index += 1
                    return .array(items)
                } else {
                    throw error("expected ',' or ']'")
                }
            }
        }

        mutating func string() throws(Error) -> String {
            index += 1
            let start = index
            // Fast path: no escapes. ASCII needs no UTF-8 validation.
            var ascii = true
            while index < bytes.count {
                let b = bytes[index]
                if b == UInt8(ascii: "\"") {
                    let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    let s = ascii ? String(decoding: raw, as: UTF8.self) : String(validating: raw, as: UTF8.self)
                    guard let s else { throw Error(offset: start, reason: "invalid UTF-8 in a string") }
                    index += 1
                    return s
                }
                if b >= 0x80 { ascii = false }
                if b == UInt8(ascii: "\\") { break }
                if b < 0x20 { throw error("control character in a string") }
                index += 1
            }
            var out = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let b = bytes[index]
                switch b {
                case UInt8(ascii: "\""):
                    index += 1
                    guard let s = String(validating: out, as: UTF8.self) else { throw Error(offset: start, reason: "invalid UTF-8 in a string") }
                    return s
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < bytes.count else { throw error("unexpected end of input in a string") }
                    let e = bytes[index]
                    index += 1
                    switch e {
                    case UInt8(ascii: "\""): out.append(0x22)
                    case UInt8(ascii: "\\"): out.append(0x5C)
                    case UInt8(ascii: "/"): out.append(0x2F)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800...0xDBFF).contains(scalar) {
                            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                                throw error("unpaired surrogate")
                            }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00...0xDFFF).contains(scalar) {
                            throw error("unpaired surrogate")
                        }
                        out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                    default: throw error("invalid escape")
                    }
                default:
                    if b < 0x20 { throw error("control character in a string") }
                    out.append(b)
                    index += 1
                }
            }
            throw error("unterminated string")
        }

        mutating func hex4() throws(Error) -> UInt32 {
            guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let b = bytes[index]
                let d: UInt32
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = UInt32(b - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = UInt32(b - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = UInt32(b - UInt8(ascii: "A") + 10)
                default: throw error("invalid \\u escape")
                }
                v = v * 16 + d
                index += 1
            }
            return v
        }

        mutating func number() throws(Error) -> JSONValue {
            let start = index
            var isInteger = true
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
                if index < bytes.count, isDigit(bytes[index]) { throw error("leading zero in a number") }
            } else {
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                isInteger = false
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                isInteger = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
                guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if isInteger, let i = integer(start..<index) { return .int(i) }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if isInteger { return .bigInteger(text) }
            guard let d = Double(text), d.isFinite else { throw Error(offset: start, reason: "number out of range") }
            return .double(d)
        }

        /// The checked digits in `range` (an optional `-`, then digits) as an Int64, or nil if it
        /// does not fit.
        func integer(_ range: Range<Int>) -> Int64? {
            var i = range.lowerBound
            let negative = bytes[i] == UInt8(ascii: "-")
            if negative { i += 1 }
            var magnitude: UInt64 = 0
            while i < range.upperBound {
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(bytes[i] &- UInt8(ascii: "0")))
                if o1 || o2 { return nil }
                magnitude = sum
                i += 1
            }
            if negative {
                return magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil
            }
            return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
        }

        func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
    }
}
