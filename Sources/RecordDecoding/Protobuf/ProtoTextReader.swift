/// The token stream the grammar walks, with the small steps every rule takes: look at the
/// current token, consume an expected one or fail with a message that says what was expected
/// where, and read names and numbers.
struct ProtoTextReader {
    /// Messages nest deeper than this only in hostile text; the limit keeps the recursive
    /// descent (and the resolver's walk of the result) off the end of the stack.
    static let maxDepth = 64

    private let tokens: [ProtoTextToken]
    private var index = 0
    var syntax = ProtoFile.Syntax.proto2
    /// How many message bodies (messages and groups) enclose the current token.
    var depth = 0

    init(_ text: String) throws(SchemaError) {
        tokens = try ProtoTextLexer.tokens(of: text)
    }

    /// The token at hand; at the end of the text, the `.end` token, for good.
    var current: ProtoTextToken { tokens[min(index, tokens.count - 1)] }

    /// The token `offset` places after the current one (or `.end`).
    func peek(_ offset: Int) -> ProtoTextToken { tokens[min(index + offset, tokens.count - 1)] }

    @discardableResult
    mutating func next() -> ProtoTextToken {
        let token = current
        if index < tokens.count - 1 { index += 1 }
        return token
    }

    /// Consumes the symbol when it is next; tells whether it was.
    mutating func take(_ symbol: String) -> Bool {
        guard current.isSymbol(symbol) else { return false }
        next()
        return true
    }

    /// Consumes the word when it is next; tells whether it was.
    mutating func takeWord(_ word: String) -> Bool {
        guard current.isWord(word) else { return false }
        next()
        return true
    }

    /// Consumes `symbol`, or fails with "expected `symbol` <context>, found …".
    mutating func expect(_ symbol: String, _ context: String) throws(SchemaError) {
        guard take(symbol) else { throw unexpected("`\(symbol)` \(context)") }
    }

    mutating func identifier(_ what: String) throws(SchemaError) -> ProtoTextToken {
        guard current.kind == .identifier else { throw unexpected(what) }
        return next()
    }

    /// `a.b.c`, with a leading dot when `allowLeadingDot` (an absolute type name).
    mutating func fullIdentifier(_ what: String, allowLeadingDot: Bool = false) throws(SchemaError) -> String {
        var name = ""
        if allowLeadingDot, take(".") { name = "." }
        name += try identifier(what).text
        while current.isSymbol(".") {
            next()
            name += "." + (try identifier("a name after `.` in `\(name).`").text)
        }
        return name
    }

    mutating func string(_ what: String) throws(SchemaError) -> ProtoTextToken {
        guard current.kind == .string else { throw unexpected(what) }
        var token = next()
        while current.kind == .string { token.text += next().text }  // "a" "b" is one string, as in C
        return token
    }

    /// An unsigned integer literal within `range`.
    mutating func integer(_ what: String, in range: ClosedRange<Int64>) throws(SchemaError) -> Int64 {
        try signedInteger(what, negative: false, in: range)
    }

    /// `[-]` integer literal within `range`; `negative` says a `-` was already consumed.
    mutating func signedInteger(_ what: String, negative: Bool, in range: ClosedRange<Int64>) throws(SchemaError) -> Int64 {
        let token = current
        guard token.kind == .integer else { throw unexpected(what) }
        let magnitude = Self.value(of: token.text)
        let value: Int64? =
            if let magnitude, negative { magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil } else {
                magnitude.flatMap { Int64(exactly: $0) }
            }
        guard let value, range.contains(value) else {
            throw token.position.error("\(negative ? "-" : "")\(token.text) is out of range for \(what) (\(range.lowerBound) to \(range.upperBound))")
        }
        next()
        return value
    }

    /// The value of an integer token's digits (hex, octal or decimal), nil past 64 bits.
    static func value(of digits: String) -> UInt64? {
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { return UInt64(digits.dropFirst(2), radix: 16) }
        if digits.count > 1, digits.hasPrefix("0") { return UInt64(digits.dropFirst(), radix: 8) }
        return UInt64(digits, radix: 10)
    }

    /// "expected <what>, found <current>", at the current token.
    func unexpected(_ what: String) -> SchemaError {
        current.position.error("expected \(what), found \(current.shown)")
    }

    /// Enters a message body, refusing to go deeper than ``maxDepth``.
    mutating func enterBody(at position: ProtoTextPosition) throws(SchemaError) {
        depth += 1
        guard depth <= Self.maxDepth else {
            throw position.error("messages are nested more than \(Self.maxDepth) deep, the most this parser reads")
        }
    }

    mutating func leaveBody() { depth -= 1 }
}
