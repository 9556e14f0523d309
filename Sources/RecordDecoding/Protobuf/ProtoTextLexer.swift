/// Splits `.proto` text into tokens, skipping whitespace and `//` and `/* */` comments.
///
/// Works on UTF-8 bytes: everything outside strings and comments is ASCII in a valid file, so
/// any other byte there is an error with its place rather than something to guess about.
struct ProtoTextLexer {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var column = 1

    private init(_ text: String) { bytes = Array(text.utf8) }

    /// All the tokens of `text`, ending with one `.end` token.
    static func tokens(of text: String) throws(SchemaError) -> [ProtoTextToken] {
        var lexer = ProtoTextLexer(text)
        var tokens: [ProtoTextToken] = []
        while true {
            try lexer.skipSpaceAndComments()
            let token = try lexer.nextToken()
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private var position: ProtoTextPosition { ProtoTextPosition(line: line, column: column) }

    private func byte(at offset: Int = 0) -> UInt8? {
        let i = index + offset
        return i < bytes.count ? bytes[i] : nil
    }

    /// Moves past one byte; a UTF-8 continuation byte does not start a new column.
    private mutating func advance() {
        guard index < bytes.count else { return }
        let b = bytes[index]
        index += 1
        if b == UInt8(ascii: "\n") {
            line += 1
            column = 1
        } else if b & 0xC0 != 0x80 {
            column += 1
        }
    }

    private mutating func skipSpaceAndComments() throws(SchemaError) {
        while let b = byte() {
            if b == 0x20 || (0x09...0x0D).contains(b) {
                advance()
            } else if b == UInt8(ascii: "/"), byte(at: 1) == UInt8(ascii: "/") {
                while let c = byte(), c != UInt8(ascii: "\n") { advance() }
            } else if b == UInt8(ascii: "/"), byte(at: 1) == UInt8(ascii: "*") {
                let start = position
                advance()
                advance()
                while true {
                    guard let c = byte() else { throw start.error("the comment that starts here is never closed with `*/`") }
                    if c == UInt8(ascii: "*"), byte(at: 1) == UInt8(ascii: "/") {
                        advance()
                        advance()
                        break
                    }
                    advance()
                }
            } else {
                return
            }
        }
    }

    private mutating func nextToken() throws(SchemaError) -> ProtoTextToken {
        let start = position
        guard let b = byte() else { return ProtoTextToken(kind: .end, text: "", position: start) }
        if Self.isLetter(b) {
            let from = index
            while let c = byte(), Self.isLetter(c) || Self.isDigit(c) { advance() }
            return ProtoTextToken(kind: .identifier, text: text(from: from), position: start)
        }
        if Self.isDigit(b) || (b == UInt8(ascii: ".") && byte(at: 1).map(Self.isDigit) == true) {
            return try number(start: start)
        }
        if b == UInt8(ascii: "\"") || b == UInt8(ascii: "'") {
            return try string(start: start)
        }
        guard (0x21...0x7E).contains(b) else {
            throw start.error(b >= 0x80 ? "unexpected non-ASCII character outside a string or comment" : "unexpected control character")
        }
        advance()
        return ProtoTextToken(kind: .symbol, text: String(UnicodeScalar(b)), position: start)
    }

    /// Integers (decimal, `0x` hex, `0` octal) and floats (`1.5`, `.5`, `5.`, `1e-3`), the
    /// shapes protobuf's tokenizer takes. Values are read later, where their range is known.
    private mutating func number(start: ProtoTextPosition) throws(SchemaError) -> ProtoTextToken {
        let from = index
        var kind = ProtoTextToken.Kind.integer
        if byte() == UInt8(ascii: "0"), let x = byte(at: 1), x | 0x20 == UInt8(ascii: "x") {
            advance()
            advance()
            guard byte().map(Self.isHexDigit) == true else { throw start.error("a hex number needs digits after `0x`") }
            while let c = byte(), Self.isHexDigit(c) { advance() }
        } else {
            while let c = byte(), Self.isDigit(c) { advance() }
            if byte() == UInt8(ascii: ".") {
                kind = .float
                advance()
                while let c = byte(), Self.isDigit(c) { advance() }
            }
            if let e = byte(), e | 0x20 == UInt8(ascii: "e") {
                kind = .float
                advance()
                if byte() == UInt8(ascii: "+") || byte() == UInt8(ascii: "-") { advance() }
                guard byte().map(Self.isDigit) == true else { throw start.error("a number's exponent needs digits") }
                while let c = byte(), Self.isDigit(c) { advance() }
            }
        }
        let digits = text(from: from)
        if kind == .integer, digits.count > 1, digits.hasPrefix("0"), !digits.hasPrefix("0x"), !digits.hasPrefix("0X"),
            digits.utf8.contains(where: { $0 > UInt8(ascii: "7") })
        {
            throw start.error("`\(digits)` starts with 0, so it is octal, and has a digit octal lacks")
        }
        if let c = byte(), Self.isLetter(c) || c == UInt8(ascii: ".") {
            throw position.error("a number must be followed by a space or a symbol, not `\(UnicodeScalar(c))`")
        }
        return ProtoTextToken(kind: kind, text: digits, position: start)
    }

    /// A quoted string with C-style escapes, decoded to its value.
    private mutating func string(start: ProtoTextPosition) throws(SchemaError) -> ProtoTextToken {
        guard let quote = byte() else { return ProtoTextToken(kind: .end, text: "", position: start) }
        advance()
        var value: [UInt8] = []
        while true {
            guard let c = byte(), c != UInt8(ascii: "\n") else {
                throw start.error("the string that starts here does not end on its line")
            }
            if c == quote {
                advance()
                return ProtoTextToken(kind: .string, text: String(decoding: value, as: UTF8.self), position: start)
            }
            if c == UInt8(ascii: "\\") {
                let escape = position
                advance()
                try unescape(into: &value, at: escape)
            } else {
                value.append(c)
                advance()
            }
        }
    }

    /// One escape after its backslash: `\n`-style letters, octal `\101`, hex `\x41`, and
    /// `\u00e9` / `\U0001F600` code points (written as UTF-8).
    private mutating func unescape(into value: inout [UInt8], at escape: ProtoTextPosition) throws(SchemaError) {
        guard let c = byte() else { throw escape.error("the string ends inside an escape") }
        let simple: [UInt8: UInt8] = [
            UInt8(ascii: "a"): 0x07, UInt8(ascii: "b"): 0x08, UInt8(ascii: "f"): 0x0C, UInt8(ascii: "n"): 0x0A,
            UInt8(ascii: "r"): 0x0D, UInt8(ascii: "t"): 0x09, UInt8(ascii: "v"): 0x0B, UInt8(ascii: "\\"): 0x5C,
            UInt8(ascii: "'"): 0x27, UInt8(ascii: "\""): 0x22, UInt8(ascii: "?"): 0x3F,
        ]
        if let decoded = simple[c] {
            value.append(decoded)
            advance()
        } else if (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(c) {
            value.append(UInt8(truncatingIfNeeded: digits(radix: 8, max: 3)))
        } else if c == UInt8(ascii: "x") || c == UInt8(ascii: "X") {
            advance()
            guard byte().map(Self.isHexDigit) == true else { throw escape.error("`\\x` needs a hex digit after it") }
            value.append(UInt8(truncatingIfNeeded: digits(radix: 16, max: 2)))
        } else if c == UInt8(ascii: "u") || c == UInt8(ascii: "U") {
            let count = c == UInt8(ascii: "u") ? 4 : 8
            advance()
            let start = index
            let code = digits(radix: 16, max: count)
            guard index - start == count, let scalar = UnicodeScalar(code) else {
                throw escape.error("`\\\(UnicodeScalar(c))` needs \(count) hex digits naming a Unicode code point")
            }
            value.append(contentsOf: Array(String(Character(scalar)).utf8))
        } else {
            throw escape.error("`\\\(UnicodeScalar(c))` is not an escape a .proto string has")
        }
    }

    /// Up to `max` digits of `radix`, read as one number.
    private mutating func digits(radix: UInt32, max: Int) -> UInt32 {
        var code: UInt32 = 0
        for _ in 0..<max {
            guard let c = byte(), let digit = UInt32(String(UnicodeScalar(c)), radix: Int(radix)) else { break }
            code = code * radix + digit
            advance()
        }
        return code
    }

    private func text(from: Int) -> String { String(decoding: bytes[from..<index], as: UTF8.self) }

    static func isLetter(_ b: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b | 0x20) || b == UInt8(ascii: "_")
    }

    static func isDigit(_ b: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) }

    static func isHexDigit(_ b: UInt8) -> Bool {
        isDigit(b) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(b | 0x20)
    }
}
