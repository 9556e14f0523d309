import Foundation

/// Reads an Xcode String Catalog (`Localizable.xcstrings`, JSON) into entries per language.
///
/// Per language, a `stringUnit` is a string (its `state` is kept); `variations.plural` (or a
/// substitution with plural variations) makes a ``ResourceEntry/Kind/xcstringsPlural``;
/// `variations.device` keeps the iPhone text (else `other`). A key with no entry for the source
/// language is its own source text, as Xcode treats it. `shouldTranslate: false` marks the
/// entry as not translatable.
public enum XCStringsParser {
    /// A parsed catalog: the source language and the entries of each language.
    public struct Catalog: Sendable {
        public var sourceLanguage: String
        public var entries: [String: [ResourceEntry]]
        public var problems: [ResourceProblem]
    }

    /// - Throws: ``ResourceProblem`` (file:line where JSON parsing says) if the file is not a
    ///   String Catalog.
    public static func parse(_ bytes: [UInt8], file: String) throws(ResourceProblem) -> Catalog {
        guard let (text, _) = TextDecoding.decode(bytes) else {
            throw ResourceProblem(.error, SourceLocation(file: file, line: 1), "not UTF-8 or UTF-16 text")
        }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        } catch {
            throw ResourceProblem(.error, SourceLocation(file: file, line: lineNumber(in: "\(error)") ?? 1), "invalid JSON in a String Catalog")
        }
        guard let root = object as? [String: Any], let strings = root["strings"] as? [String: Any] else {
            throw ResourceProblem(.error, SourceLocation(file: file, line: 1), "not a String Catalog: no \"strings\" object")
        }
        let source = root["sourceLanguage"] as? String ?? "en"
        let lines = LineFinder(text: text)
        var catalog = Catalog(sourceLanguage: source, entries: [:], problems: [])
        for key in strings.keys.sorted() {
            let keyLine = lines.line(ofMember: key, after: lines.stringsLine)
            guard let string = strings[key] as? [String: Any] else {
                catalog.problems.append(ResourceProblem(.error, SourceLocation(file: file, line: keyLine), "\"\(key)\" is not an object"))
                continue
            }
            let translatable = string["shouldTranslate"] as? Bool ?? true
            let localizations = string["localizations"] as? [String: Any] ?? [:]
            if localizations[source] == nil {
                var entry = ResourceEntry(key: key, kind: .string, value: key, location: SourceLocation(file: file, line: keyLine))
                entry.translatable = translatable
                catalog.entries[source, default: []].append(entry)
            }
            for language in localizations.keys.sorted() {
                let line = lines.line(ofMember: language, after: keyLine)
                let location = SourceLocation(file: file, line: line)
                guard let localization = localizations[language] as? [String: Any], let unit = resolve(localization) else {
                    catalog.problems.append(
                        ResourceProblem(.warning, location, "\"\(key)\" in \(language): no stringUnit or known variations; ignored"))
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

    private static func resolve(_ localization: [String: Any]) -> (kind: ResourceEntry.Kind, value: String, state: String?)? {
        var plural = false
        if let substitutions = localization["substitutions"] as? [String: Any] {
            plural = substitutions.values.contains { (($0 as? [String: Any])?["variations"] as? [String: Any])?["plural"] != nil }
        }
        if let unit = localization["stringUnit"] as? [String: Any] {
            return (plural ? .xcstringsPlural : .string, unit["value"] as? String ?? "", unit["state"] as? String)
        }
        guard let variations = localization["variations"] as? [String: Any] else { return nil }
        if let forms = variations["plural"] as? [String: Any] {
            let other = (forms["other"] as? [String: Any]).flatMap(resolve)
            return (.xcstringsPlural, other?.value ?? "", other?.state)
        }
        if let devices = variations["device"] as? [String: Any] {
            let chosen = (devices["iphone"] ?? devices["other"] ?? devices.values.first) as? [String: Any]
            return chosen.flatMap(resolve)
        }
        return nil
    }

    /// "… line 12, column 3 …" in an error description.
    private static func lineNumber(in description: String) -> Int? {
        guard let range = description.range(of: "line ") else { return nil }
        return Int(description[range.upperBound...].prefix { $0.isNumber })
    }

    /// Finds the line of a JSON member name (`"name" :`); JSONSerialization keeps no positions.
    private struct LineFinder {
        let lines: [Substring]
        let stringsLine: Int

        init(text: String) {
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            self.lines = lines
            stringsLine = Self.find("strings", in: lines, after: 0) ?? 1
        }

        func line(ofMember name: String, after line: Int) -> Int {
            Self.find(name, in: lines, after: line) ?? max(line, 1)
        }

        /// The first line after `line` (1-based) holding `"name"` followed by a colon.
        private static func find(_ name: String, in lines: [Substring], after line: Int) -> Int? {
            let quoted = "\"" + escape(name) + "\""
            var i = max(line, 0)  // 0-based index of the line after `line` (1-based)
            while i < lines.count {
                if let r = lines[i].range(of: quoted), lines[i][r.upperBound...].drop(while: { $0 == " " || $0 == "\t" }).first == ":" {
                    return i + 1
                }
                i += 1
            }
            return nil
        }

        private static func escape(_ s: String) -> String {
            var out = ""
            for c in s.unicodeScalars {
                switch c {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\t": out += "\\t"
                default: out.unicodeScalars.append(c)
                }
            }
            return out
        }
    }
}
