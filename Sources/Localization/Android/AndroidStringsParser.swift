/// Reads an Android `res/values*/strings.xml` (any resource XML file): `<string>`,
/// `<item type="string">`, and, so that a loc key pointing at them can be reported,
/// `<plurals>` and `<string-array>`. Other resource types are skipped.
///
/// Values are decoded as aapt2 does: XML entities and CDATA first, inline markup (`<b>`,
/// `<xliff:g>` …) reduced to its text, then Android's own rules (``AndroidStringValue``). What
/// aapt2 refuses (an unescaped apostrophe, a bad `\u` escape, a `translatable` that is not a
/// boolean) is a problem of kind `.androidBuild` at its line.
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
        // aapt2 compiles a file whose name contains "donottranslate" as translatable="false";
        // Android Lint takes translatable="false" on <resources> for every string in the file.
        let fileTranslatable =
            !(file.split(separator: "/").last ?? "").contains("donottranslate")
            && root.attribute("translatable").flatMap(AndroidStringValue.bool) != false
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
                result.problems.append(
                    ResourceProblem(.error, location, "duplicate resource \(name) (first at line \(first)); aapt2 rejects this file", key: name))
                continue
            }
            seen[name] = element.line
            /// Decodes one value, reporting what aapt2 refuses in it at its line.
            func value(_ node: XMLElement, text: String? = nil) -> String {
                let decoded = AndroidStringValue(text ?? node.textContent)
                for p in decoded.problems {
                    result.problems.append(
                        ResourceProblem(
                            p.severity, SourceLocation(file: file, line: node.firstTextLine + p.lineOffset),
                            "\(name): \(p.message)", kind: .androidBuild, key: name))
                }
                return decoded.text
            }
            var entry: ResourceEntry
            switch kind {
            case .plurals, .stringArray:
                // aapt2 reads every item; the entry keeps the one a message shows.
                let items = element.elements.filter { $0.name == "item" }
                let texts = items.map { value($0) }
                let shown = kind == .plurals ? items.firstIndex { $0.attribute("quantity") == "other" } : items.indices.first
                entry = ResourceEntry(key: name, kind: kind, value: shown.map { texts[$0] } ?? "", location: location)
            default:
                let raw = element.textContent
                entry = ResourceEntry(key: name, kind: .string, value: value(element, text: raw), location: location)
                let trimmed = raw.drop { $0.isWhitespace }
                if trimmed.hasPrefix("@string/") {
                    entry.reference = String(trimmed.dropFirst("@string/".count).prefix { !$0.isWhitespace })
                }
            }
            func flag(_ attribute: String, default fallback: Bool) -> Bool {
                guard let text = element.attribute(attribute) else { return fallback }
                guard let parsed = AndroidStringValue.bool(text) else {
                    result.problems.append(
                        ResourceProblem(
                            .error, location,
                            "\(name): \(attribute)=\"\(text)\" is not a boolean: aapt2 stops with \"invalid value for '\(attribute)'. Must be a boolean\" (write true or false)",
                            kind: .androidBuild, key: name))
                    return fallback
                }
                return parsed
            }
            entry.formatted = flag("formatted", default: true)
            entry.translatable = flag("translatable", default: fileTranslatable)
            result.entries.append(entry)
        }
        return result
    }
}

extension XMLElement {
    /// The line where the element's text starts (its first text below it), else its start tag's.
    var firstTextLine: Int {
        for child in children {
            switch child {
            case .text(_, let line, _): return line
            case .element(let e): return e.firstTextLine
            }
        }
        return line
    }
}
