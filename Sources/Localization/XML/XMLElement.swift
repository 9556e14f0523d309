/// A node of a parsed XML document. Comments, processing instructions and the DOCTYPE are dropped.
public enum XMLNode: Sendable, Equatable {
    case element(XMLElement)
    /// Character data (entity-decoded) or CDATA content, and its line.
    case text(String, line: Int, isCDATA: Bool)
}

/// An element with its attributes and children, and the line of its start tag.
public struct XMLElement: Sendable, Equatable {
    public var name: String
    public var attributes: [XMLAttribute]
    public var children: [XMLNode]
    public var line: Int

    /// The value of an attribute, if present.
    public func attribute(_ name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    /// The child elements, in order.
    public var elements: [XMLElement] {
        children.compactMap { if case .element(let e) = $0 { e } else { nil } }
    }

    /// All text below this element, markup removed (text and CDATA of every descendant, in order).
    public var textContent: String {
        var out = ""
        for child in children {
            switch child {
            case .text(let s, _, _): out += s
            case .element(let e): out += e.textContent
            }
        }
        return out
    }

    /// How deep elements may nest; resource files need a handful of levels, and the tree's
    /// recursive walks must not exhaust the stack on hostile input.
    public static let maximumDepth = 256

    /// Parses a whole document and returns its root element.
    /// - Throws: ``XMLSyntaxError`` for malformed XML, mismatched tags, text outside the root,
    ///   nesting deeper than ``maximumDepth``, or no root at all.
    public static func parseDocument(_ bytes: [UInt8]) throws(XMLSyntaxError) -> XMLElement {
        var tokenizer = try XMLTokenizer(utf8: bytes)
        var stack: [XMLElement] = []
        var root: XMLElement?
        while let token = try tokenizer.next() {
            switch token.kind {
            case .startTag(let name, let attributes, let selfClosing):
                if root != nil && stack.isEmpty {
                    throw XMLSyntaxError(line: token.line, message: "a second root element <\(name)>")
                }
                let element = XMLElement(name: name, attributes: attributes, children: [], line: token.line)
                guard stack.count < maximumDepth else {
                    throw XMLSyntaxError(line: token.line, message: "elements nested more than \(maximumDepth) deep")
                }
                if selfClosing {
                    try Self.close(element, into: &stack, root: &root)
                } else {
                    stack.append(element)
                }
            case .endTag(let name):
                guard let open = stack.popLast() else {
                    throw XMLSyntaxError(line: token.line, message: "</\(name)> closes nothing")
                }
                guard open.name == name else {
                    throw XMLSyntaxError(line: token.line, message: "</\(name)> does not match <\(open.name)> opened at line \(open.line)")
                }
                try Self.close(open, into: &stack, root: &root)
            case .text(let s), .cdata(let s):
                let isCDATA = if case .cdata = token.kind { true } else { false }
                if stack.isEmpty {
                    guard !isCDATA, s.allSatisfy(\.isWhitespace) else {
                        throw XMLSyntaxError(line: token.line, message: "text outside the root element")
                    }
                } else {
                    stack[stack.count - 1].children.append(.text(s, line: token.line, isCDATA: isCDATA))
                }
            case .comment, .processingInstruction, .doctype:
                break
            }
        }
        if let open = stack.last {
            throw XMLSyntaxError(line: open.line, message: "<\(open.name)> is never closed")
        }
        guard let root else { throw XMLSyntaxError(line: 1, message: "no root element") }
        return root
    }

    private static func close(_ element: XMLElement, into stack: inout [XMLElement], root: inout XMLElement?) throws(XMLSyntaxError) {
        if stack.isEmpty {
            root = element
        } else {
            stack[stack.count - 1].children.append(.element(element))
        }
    }
}
