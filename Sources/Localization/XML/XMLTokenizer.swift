/// A syntax error in an XML file, at a 1-based line.
public struct XMLSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var message: String

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { "line \(line): \(message)" }
}

/// One piece of an XML document, with the line it starts on.
public struct XMLToken: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// `<name a="v">` or `<name/>`; attribute values are entity-decoded.
        case startTag(name: String, attributes: [XMLAttribute], selfClosing: Bool)
        case endTag(name: String)
        /// Character data, entity-decoded.
        case text(String)
        /// The content of `<![CDATA[ … ]]>`, verbatim.
        case cdata(String)
        case comment(String)
        /// `<?target content?>`, the XML declaration included.
        case processingInstruction(target: String, content: String)
        /// `<!DOCTYPE …>`, verbatim.
        case doctype(String)
    }

    public var kind: Kind
    public var line: Int

    public init(kind: Kind, line: Int) {
        self.kind = kind
        self.line = line
    }
}

/// An attribute of a start tag.
public struct XMLAttribute: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// A small, strict XML tokenizer for resource files: elements, attributes, text, CDATA,
/// comments, processing instructions and a DOCTYPE, with the five predefined entities and
/// character references. It does not read DTDs, so no other entity is known.
///
/// It works on UTF-8 bytes (``TextDecoding`` turns UTF-16 files into UTF-8 first) and counts
/// lines as it goes, so every token and every error has a line.
public struct XMLTokenizer {
    private let bytes: [UInt8]
    private var position = 0
    private var line = 1

    /// - Throws: ``XMLSyntaxError`` if the bytes are not valid UTF-8.
    public init(utf8 bytes: [UInt8]) throws(XMLSyntaxError) {
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw XMLSyntaxError(line: 1, message: "not valid UTF-8")
        }
        self.bytes = bytes
    }

    /// Every token of the document, in order.
    /// - Throws: ``XMLSyntaxError`` at the first malformed construct.
    public static func tokenize(_ bytes: [UInt8]) throws(XMLSyntaxError) -> [XMLToken] {
        var tokenizer = try XMLTokenizer(utf8: bytes)
        var tokens: [XMLToken] = []
        while let token = try tokenizer.next() { tokens.append(token) }
        return tokens
    }

    /// The next token, or nil at the end.
    public mutating func next() throws(XMLSyntaxError) -> XMLToken? {
        guard position < bytes.count else { return nil }
        let startLine = line
        if bytes[position] != UInt8(ascii: "<") {
            return XMLToken(kind: .text(try text()), line: startLine)
        }
        if starts(with: "<!--") {
            let body = try until("-->", construct: "comment", from: startLine, skipping: 4)
            return XMLToken(kind: .comment(body), line: startLine)
        }
        if starts(with: "<![CDATA[") {
            let body = try until("]]>", construct: "CDATA section", from: startLine, skipping: 9)
            return XMLToken(kind: .cdata(body), line: startLine)
        }
        if starts(with: "<!DOCTYPE") || starts(with: "<!doctype") {
            return XMLToken(kind: .doctype(try doctype(from: startLine)), line: startLine)
        }
        if starts(with: "<?") {
            let body = try until("?>", construct: "processing instruction", from: startLine, skipping: 2)
            let target = String(body.prefix { !$0.isWhitespace })
            guard !target.isEmpty else { throw XMLSyntaxError(line: startLine, message: "processing instruction without a target") }
            let content = body.dropFirst(target.count).drop { $0.isWhitespace }
            return XMLToken(kind: .processingInstruction(target: target, content: String(content)), line: startLine)
        }
        if starts(with: "</") {
            advance(2)
            let name = try self.name(in: "end tag", from: startLine)
            skipWhitespace()
            guard consume(">") else { throw XMLSyntaxError(line: line, message: "expected > to close </\(name)") }
            return XMLToken(kind: .endTag(name: name), line: startLine)
        }
        return try startTag(from: startLine)
    }

    // MARK: - Constructs

    private mutating func startTag(from startLine: Int) throws(XMLSyntaxError) -> XMLToken {
        advance(1)  // <
        let name = try self.name(in: "start tag", from: startLine)
        var attributes: [XMLAttribute] = []
        while true {
            let hadSpace = skipWhitespace()
            guard position < bytes.count else { throw XMLSyntaxError(line: startLine, message: "unterminated start tag <\(name)") }
            if consume("/>") {
                return XMLToken(kind: .startTag(name: name, attributes: attributes, selfClosing: true), line: startLine)
            }
            if consume(">") {
                return XMLToken(kind: .startTag(name: name, attributes: attributes, selfClosing: false), line: startLine)
            }
            guard hadSpace else { throw XMLSyntaxError(line: line, message: "expected whitespace, > or /> in <\(name)") }
            let attributeName = try self.name(in: "attribute of <\(name)>", from: line)
            skipWhitespace()
            guard consume("=") else { throw XMLSyntaxError(line: line, message: "attribute \(attributeName) of <\(name)> has no value") }
            skipWhitespace()
            let value = try attributeValue(of: attributeName)
            if attributes.contains(where: { $0.name == attributeName }) {
                throw XMLSyntaxError(line: line, message: "attribute \(attributeName) repeated in <\(name)>")
            }
            attributes.append(XMLAttribute(name: attributeName, value: value))
        }
    }

    private mutating func attributeValue(of attribute: String) throws(XMLSyntaxError) -> String {
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") || bytes[position] == UInt8(ascii: "'") else {
            throw XMLSyntaxError(line: line, message: "the value of \(attribute) must be quoted")
        }
        let quote = bytes[position]
        let startLine = line
        advance(1)
        var out: [UInt8] = []
        while position < bytes.count, bytes[position] != quote {
            let b = bytes[position]
            if b == UInt8(ascii: "<") { throw XMLSyntaxError(line: line, message: "< in the value of \(attribute)") }
            if b == UInt8(ascii: "&") {
                out.append(contentsOf: try entity())
            } else {
                // Attribute-value normalization: tab, CR and LF become spaces.
                out.append(b == 0x09 || b == 0x0A || b == 0x0D ? 0x20 : b)
                advance(1)
            }
        }
        guard position < bytes.count else { throw XMLSyntaxError(line: startLine, message: "unterminated value of \(attribute)") }
        advance(1)
        return String(decoding: out, as: UTF8.self)
    }

    private mutating func text() throws(XMLSyntaxError) -> String {
        var out: [UInt8] = []
        while position < bytes.count, bytes[position] != UInt8(ascii: "<") {
            if bytes[position] == UInt8(ascii: "&") {
                out.append(contentsOf: try entity())
            } else {
                out.append(bytes[position])
                advance(1)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `&name;` or `&#NN;` / `&#xNN;` at the current position, as UTF-8.
    private mutating func entity() throws(XMLSyntaxError) -> [UInt8] {
        let start = position
        advance(1)
        var name: [UInt8] = []
        while position < bytes.count, bytes[position] != UInt8(ascii: ";"), name.count < 12 {
            name.append(bytes[position])
            position += 1
        }
        guard position < bytes.count, bytes[position] == UInt8(ascii: ";") else {
            throw XMLSyntaxError(line: line, message: "& must start an entity such as &amp; (write &amp; for a literal &)")
        }
        position += 1
        let text = String(decoding: name, as: UTF8.self)
        switch text {
        case "lt": return [UInt8(ascii: "<")]
        case "gt": return [UInt8(ascii: ">")]
        case "amp": return [UInt8(ascii: "&")]
        case "quot": return [UInt8(ascii: "\"")]
        case "apos": return [UInt8(ascii: "'")]
        default:
            var value: UInt32?
            if text.hasPrefix("#x") || text.hasPrefix("#X") {
                value = UInt32(text.dropFirst(2), radix: 16)
            } else if text.hasPrefix("#") {
                value = UInt32(text.dropFirst(), radix: 10)
            }
            if let value, let scalar = Unicode.Scalar(value), value != 0 {
                return Array(String(Character(scalar)).utf8)
            }
            position = start
            throw XMLSyntaxError(line: line, message: "unknown entity &\(text);")
        }
    }

    private mutating func doctype(from startLine: Int) throws(XMLSyntaxError) -> String {
        let start = position
        var depth = 0
        while position < bytes.count {
            let b = bytes[position]
            if b == UInt8(ascii: "[") { depth += 1 }
            if b == UInt8(ascii: "]") { depth -= 1 }
            advance(1)
            if b == UInt8(ascii: ">") && depth <= 0 {
                return String(decoding: bytes[start..<position], as: UTF8.self)
            }
        }
        throw XMLSyntaxError(line: startLine, message: "unterminated DOCTYPE")
    }

    // MARK: - Scanning

    private mutating func name(in construct: String, from startLine: Int) throws(XMLSyntaxError) -> String {
        let start = position
        while position < bytes.count, Self.isNameByte(bytes[position], first: position == start) { position += 1 }
        guard position > start else { throw XMLSyntaxError(line: startLine, message: "expected a name in \(construct)") }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    private static func isNameByte(_ b: UInt8, first: Bool) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"), UInt8(ascii: ":"), 0x80...0xFF:
            return true
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."):
            return !first
        default:
            return false
        }
    }

    /// Reads up to `terminator`, consumes it, and returns what was before it.
    private mutating func until(_ terminator: String, construct: String, from startLine: Int, skipping: Int) throws(XMLSyntaxError) -> String {
        advance(skipping)
        let start = position
        while position < bytes.count {
            if starts(with: terminator) {
                let body = String(decoding: bytes[start..<position], as: UTF8.self)
                advance(terminator.utf8.count)
                return body
            }
            advance(1)
        }
        throw XMLSyntaxError(line: startLine, message: "unterminated \(construct)")
    }

    @discardableResult
    private mutating func skipWhitespace() -> Bool {
        let start = position
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { advance(1) }
        return position > start
    }

    private func starts(with literal: String) -> Bool {
        var i = position
        for b in literal.utf8 {
            guard i < bytes.count, bytes[i] == b else { return false }
            i += 1
        }
        return true
    }

    private mutating func consume(_ literal: String) -> Bool {
        guard starts(with: literal) else { return false }
        advance(literal.utf8.count)
        return true
    }

    private mutating func advance(_ n: Int) {
        for _ in 0..<n where position < bytes.count {
            if bytes[position] == 0x0A { line += 1 }
            position += 1
        }
    }
}
