import JSON

/// Reads an Xcode String Catalog (`Localizable.xcstrings`, JSON) into entries per language.
///
/// Per language, a `stringUnit` is a string (its `state` is kept); `variations.plural` (or a
/// substitution with plural variations) makes a ``ResourceEntry/Kind/xcstringsPlural``;
/// `variations.device` keeps the iPhone text (else `other`, else the first). A key Xcode extracted
/// from code with no entry for the source language is its own source text (`"%@"`), as Xcode
/// treats it; a key added by hand (`extractionState: "manual"`) is a name, not text, so without
/// a source-language entry it has no text there: it goes to ``Catalog/manualKeysWithoutSource``
/// and the device shows the raw key. `shouldTranslate: false` marks the entry as not
/// translatable. Of a name repeated in an object, the last counts.
public enum XCStringsParser {
    /// A parsed catalog: the source language and the entries of each language.
    public struct Catalog: Sendable {
        public var sourceLanguage: String
        public var entries: [String: [ResourceEntry]]
        public var problems: [ResourceProblem]
        /// Keys added by hand (`extractionState: "manual"`) with no source-language entry, and
        /// where each is.
        public var manualKeysWithoutSource: [String: SourceLocation] = [:]
    }

    /// - Throws: ``ResourceProblem`` (file:line of the JSON error) if the file is not a String
    ///   Catalog.
    public static func parse(_ bytes: [UInt8], file: String) throws(ResourceProblem) -> Catalog {
        guard let (text, _) = TextDecoding.decode(bytes) else {
            throw ResourceProblem(.error, SourceLocation(file: file, line: 1), "not UTF-8 or UTF-16 text")
        }
        let utf8 = Array(text.utf8)
        let lines = LineIndex(utf8)
        let document: JSONValue
        let members: [JSONParser.MemberOffset]
        do {
            (document, members) = try JSONParser.parseWithMemberOffsets(utf8)
        } catch {
            throw ResourceProblem(.error, SourceLocation(file: file, line: lines.line(at: error.offset)), "invalid JSON in a String Catalog")
        }
        guard let root = object(document), let strings = object(root["strings"]) else {
            throw ResourceProblem(.error, SourceLocation(file: file, line: 1), "not a String Catalog: no \"strings\" object")
        }
        // Of a repeated name, the last counts, as in `object(_:)`.
        let offsets = Dictionary(members, uniquingKeysWith: { _, last in last })
        /// The line where the member at `tokens` starts.
        func line(_ tokens: String...) -> Int {
            lines.line(at: offsets[JSONPointer(tokens: tokens)] ?? 0)
        }
        let source = root["sourceLanguage"]?.stringValue ?? "en"
        var catalog = Catalog(sourceLanguage: source, entries: [:], problems: [])
        for key in strings.keys.sorted() {
            let keyLine = line("strings", key)
            guard let string = object(strings[key]) else {
                catalog.problems.append(ResourceProblem(.error, SourceLocation(file: file, line: keyLine), "\"\(key)\" is not an object", key: key))
                continue
            }
            let translatable = bool(string["shouldTranslate"]) ?? true
            let localizations = object(string["localizations"]) ?? [:]
            if localizations[source] == nil, string["extractionState"]?.stringValue == "manual" {
                catalog.manualKeysWithoutSource[key] = SourceLocation(file: file, line: keyLine)
            } else if localizations[source] == nil {
                var entry = ResourceEntry(key: key, kind: .string, value: key, location: SourceLocation(file: file, line: keyLine))
                entry.translatable = translatable
                catalog.entries[source, default: []].append(entry)
            }
            for language in localizations.keys.sorted() {
                let location = SourceLocation(file: file, line: line("strings", key, "localizations", language))
                guard let localization = object(localizations[language]), let unit = resolve(localization) else {
                    catalog.problems.append(
                        ResourceProblem(.warning, location, "\"\(key)\" in \(language): no stringUnit or known variations; ignored", key: key)
                            .in(LocaleTag.normalize(language)))
                    continue
                }
                var entry = ResourceEntry(key: key, kind: unit.kind, value: unit.value, location: location)
                entry.state = unit.state
                entry.translatable = translatable
                catalog.entries[language, default: []].append(entry)
            }
        }
        return catalog
    }

    private static func resolve(_ localization: [String: JSONValue]) -> (kind: ResourceEntry.Kind, value: String, state: String?)? {
        var plural = false
        if let substitutions = object(localization["substitutions"]) {
            plural = substitutions.values.contains { object(object($0)?["variations"])?["plural"] != nil }
        }
        if let unit = object(localization["stringUnit"]) {
            return (plural ? .xcstringsPlural : .string, unit["value"]?.stringValue ?? "", unit["state"]?.stringValue)
        }
        guard let variations = object(localization["variations"]) else { return nil }
        if let forms = object(variations["plural"]) {
            let other = object(forms["other"]).flatMap(resolve)
            return (.xcstringsPlural, other?.value ?? "", other?.state)
        }
        if let devices = object(variations["device"]), case .object(let inOrder)? = variations["device"] {
            return object(devices["iphone"] ?? devices["other"] ?? inOrder.first?.value).flatMap(resolve)
        }
        return nil
    }

    /// An object's members by name, the last of a repeated name winning; nil if not an object.
    private static func object(_ value: JSONValue?) -> [String: JSONValue]? {
        guard case .object(let members)? = value else { return nil }
        return Dictionary(members, uniquingKeysWith: { _, last in last })
    }

    /// `true` or `false`; the numbers 1 and 0 count as them too.
    private static func bool(_ value: JSONValue?) -> Bool? {
        switch value {
        case .bool(let b)?: b
        case .int(let i)? where i == 0 || i == 1: i == 1
        case .double(let d)? where d == 0 || d == 1: d == 1
        default: nil
        }
    }

    /// The lines of UTF-8 text, for the line of a byte offset.
    private struct LineIndex {
        /// Where each line feed is.
        private var newlines: [Int] = []

        init(_ utf8: [UInt8]) {
            for (offset, byte) in utf8.enumerated() where byte == UInt8(ascii: "\n") { newlines.append(offset) }
        }

        /// The 1-based line holding the byte at `offset`.
        func line(at offset: Int) -> Int {
            var low = 0
            var high = newlines.count
            while low < high {
                let middle = (low + high) / 2
                if newlines[middle] < offset { low = middle + 1 } else { high = middle }
            }
            return low + 1
        }
    }
}
