/// Reads an Android `res/values*/strings.xml` (any resource XML file): `<string>`,
/// `<item type="string">`, and, so that a loc key pointing at them can be reported,
/// `<plurals>` and `<string-array>`. Other resource types are skipped.
///
/// Values are decoded as aapt2 does: XML entities and CDATA first, inline markup (`<b>`,
/// `<xliff:g>` …) reduced to its text, then Android's own rules — `\'` `\"` `\\` `\@` `\?`
/// `\n` `\t` `\uXXXX` escapes, double quotes that preserve whitespace (and are removed), and
/// other runs of whitespace collapsed to one space and trimmed at both ends.
public enum AndroidStringsParser {
    /// - Throws: ``ResourceProblem`` (with the file and line) if the XML is malformed or the
    ///   root is not `<resources>`.
    public static func parse(_ bytes: [UInt8], file: String) throws(ResourceProblem) -> ParsedResources {
        guard let utf8 = TextDecoding.utf8Bytes(bytes) else {
            throw ResourceProblem(.error, SourceLocation(file: file, line: 1), "not UTF-8 or UTF-16 text")
        }
        let root: XMLElement
        do {
            root = try XMLElement.parseDocument(utf8)
        } catch {
            throw ResourceProblem(.error, SourceLocation(file: file, line: error.line), "invalid XML: \(error.message)")
        }
        guard root.name == "resources" else {
            throw ResourceProblem(.error, SourceLocation(file: file, line: root.line), "the root element is <\(root.name)>, expected <resources>")
        }
        var result = ParsedResources()
        var seen: [String: Int] = [:]
        for element in root.elements {
            let location = SourceLocation(file: file, line: element.line)
            let kind: ResourceEntry.Kind
            switch element.name {
            case "string": kind = .string
            case "item" where element.attribute("type") == "string": kind = .string
            case "plurals": kind = .plurals
            case "string-array": kind = .stringArray
            default: continue
            }
            guard let name = element.attribute("name"), !name.isEmpty else {
                result.problems.append(ResourceProblem(.error, location, "<\(element.name)> without a name"))
                continue
            }
            if let first = seen[name] {
                result.problems.append(ResourceProblem(.error, location, "duplicate resource \(name) (first at line \(first)); aapt2 rejects this file"))
                continue
            }
            seen[name] = element.line
            var entry: ResourceEntry
            switch kind {
            case .plurals:
                let other = element.elements.first { $0.name == "item" && $0.attribute("quantity") == "other" }
                entry = ResourceEntry(key: name, kind: kind, value: decode(other?.textContent ?? ""), location: location)
            case .stringArray:
                let first = element.elements.first { $0.name == "item" }
                entry = ResourceEntry(key: name, kind: kind, value: decode(first?.textContent ?? ""), location: location)
            default:
                let raw = element.textContent
                entry = ResourceEntry(key: name, kind: .string, value: decode(raw), location: location)
                let trimmed = raw.drop { $0.isWhitespace }
                if trimmed.hasPrefix("@string/") {
                    entry.reference = String(trimmed.dropFirst("@string/".count).prefix { !$0.isWhitespace })
                }
            }
            entry.formatted = element.attribute("formatted") != "false"
            entry.translatable = element.attribute("translatable") != "false"
            result.entries.append(entry)
        }
        return result
    }

    /// Applies Android's string rules to text already freed of XML entities and markup.
    public static func decode(_ raw: String) -> String {
        var out = ""
        var quoted = false
        var pendingSpace = false
        var scalars = raw.unicodeScalars.makeIterator()
        func flushSpace() {
            if pendingSpace && !out.isEmpty { out += " " }
            pendingSpace = false
        }
        while let c = scalars.next() {
            switch c {
            case "\\":
                flushSpace()
                guard let e = scalars.next() else { break }
                switch e {
                case "n": out += "\n"
                case "t": out += "\t"
                case "u":
                    var hex = ""
                    for _ in 0..<4 { if let h = scalars.next() { hex.unicodeScalars.append(h) } }
                    if let v = UInt32(hex, radix: 16), let s = Unicode.Scalar(v) {
                        out.unicodeScalars.append(s)
                    } else {
                        out += "u" + hex
                    }
                default: out.unicodeScalars.append(e)  // \' \" \\ \@ \? and any other
                }
            case "\"":
                flushSpace()
                quoted.toggle()
            case " ", "\t", "\n", "\r":
                if quoted { out.unicodeScalars.append(c) } else { pendingSpace = true }
            default:
                flushSpace()
                out.unicodeScalars.append(c)
            }
        }
        return out
    }
}
