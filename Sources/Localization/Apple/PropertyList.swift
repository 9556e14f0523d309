/// A value of an XML property list (`.stringsdict`), with the line it starts on.
public indirect enum PropertyList: Sendable, Equatable {
    case string(String)
    case number(String)
    case bool(Bool)
    /// `<date>` or `<data>`, kept as text.
    case other(String)
    case array([PropertyList])
    /// Entries in file order, each with the line of its `<key>`.
    case dictionary([(key: String, value: PropertyList, line: Int)])

    public static func == (a: PropertyList, b: PropertyList) -> Bool {
        switch (a, b) {
        case (.string(let x), .string(let y)), (.number(let x), .number(let y)), (.other(let x), .other(let y)): return x == y
        case (.bool(let x), .bool(let y)): return x == y
        case (.array(let x), .array(let y)): return x == y
        case (.dictionary(let x), .dictionary(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { $0.key == $1.key && $0.value == $1.value && $0.line == $1.line }
        default: return false
        }
    }

    /// The value of a dictionary entry.
    public subscript(key: String) -> PropertyList? {
        guard case .dictionary(let entries) = self else { return nil }
        return entries.first { $0.key == key }?.value
    }

    public var string: String? {
        if case .string(let s) = self { s } else { nil }
    }

    /// Reads `<plist><dict>…</dict></plist>` (or a bare value element).
    /// - Throws: ``XMLSyntaxError`` for anything that is not a property list.
    public static func parse(_ root: XMLElement) throws(XMLSyntaxError) -> PropertyList {
        if root.name == "plist" {
            let values = root.elements
            guard values.count == 1, let value = values.first else {
                throw XMLSyntaxError(line: root.line, message: "<plist> must hold exactly one value")
            }
            return try parseValue(value)
        }
        return try parseValue(root)
    }

    private static func parseValue(_ e: XMLElement) throws(XMLSyntaxError) -> PropertyList {
        switch e.name {
        case "string": return .string(e.textContent)
        case "integer", "real": return .number(e.textContent.trimmingWhitespace)
        case "true": return .bool(true)
        case "false": return .bool(false)
        case "date", "data": return .other(e.textContent)
        case "array":
            var values: [PropertyList] = []
            for child in e.elements { values.append(try parseValue(child)) }
            return .array(values)
        case "dict":
            var entries: [(key: String, value: PropertyList, line: Int)] = []
            let children = e.elements
            var i = 0
            while i < children.count {
                let key = children[i]
                guard key.name == "key" else {
                    throw XMLSyntaxError(line: key.line, message: "expected <key> in <dict>, found <\(key.name)>")
                }
                guard i + 1 < children.count else {
                    throw XMLSyntaxError(line: key.line, message: "<key>\(key.textContent)</key> has no value")
                }
                entries.append((key.textContent, try parseValue(children[i + 1]), key.line))
                i += 2
            }
            return .dictionary(entries)
        default:
            throw XMLSyntaxError(line: e.line, message: "<\(e.name)> is not a property list value")
        }
    }
}
