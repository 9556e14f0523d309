/// Reads an iOS `.strings` file (`Localizable.strings`): `"KEY" = "value";` pairs with
/// `/* */` and `//` comments, in UTF-8 or UTF-16 (either byte order, with a BOM).
///
/// Quoted strings take the old-style property list escapes: `\"` `\\` `\n` `\t` `\r` and
/// friends, `\UXXXX` (UTF-16 units, surrogate pairs joined) and octal `\NNN`. Unquoted keys
/// and values (`[A-Za-z0-9_$+/:.-]`) and the short form `"KEY";` (value = key) are accepted.
public enum StringsFileParser {
    /// - Throws: ``ResourceProblem`` (file:line) at the first syntax error, or if the file is in
    ///   no supported encoding.
    public static func parse(_ bytes: [UInt8], file: String) throws(ResourceProblem) -> ParsedResources {
        if bytes.starts(with: Array("bplist".utf8)) {
            throw ResourceProblem(
                .error, SourceLocation(file: file, line: 1), "a binary property list (a compiled .strings file); give the source file")
        }
        guard let (text, _) = TextDecoding.decode(bytes) else {
            throw ResourceProblem(.error, SourceLocation(file: file, line: 1), "not UTF-8, or UTF-16 with a byte order mark")
        }
        var scanner = Scanner(scalars: Array(text.unicodeScalars), file: file)
        return try scanner.parse()
    }

    private struct Scanner {
        let scalars: [Unicode.Scalar]
        let file: String
        var i = 0
        var line = 1

        init(scalars: [Unicode.Scalar], file: String) {
            self.scalars = scalars
            self.file = file
        }

        mutating func parse() throws(ResourceProblem) -> ParsedResources {
            var result = ParsedResources()
            var seen: [String: Int] = [:]
            while true {
                try skipTrivia()
                guard i < scalars.count else { break }
                let keyLine = line
                let key = try string(what: "a key")
                // Where the pair ends: a missing ; belongs there, not to the next line's token
                // (CoreFoundation's parser reports the next token's line).
                var endLine = line
                try skipTrivia()
                var value = key
                if peek == "=" {
                    advance()
                    try skipTrivia()
                    value = try string(what: "a value")
                    endLine = line
                    try skipTrivia()
                }
                guard peek == ";" else {
                    var missing = problem("expected ; after the value of \"\(key)\"", line: endLine)
                    missing.key = key
                    throw missing
                }
                advance()
                let location = SourceLocation(file: file, line: keyLine)
                if let first = seen[key] {
                    result.problems.append(
                        ResourceProblem(.warning, location, "duplicate key \"\(key)\" (first at line \(first)); the last one wins", key: key))
                    result.entries.removeAll { $0.key == key }
                }
                seen[key] = keyLine
                result.entries.append(ResourceEntry(key: key, kind: .string, value: value, location: location))
            }
            return result
        }

        var peek: Unicode.Scalar? { i < scalars.count ? scalars[i] : nil }

        mutating func advance() {
            if scalars[i] == "\n" { line += 1 }
            i += 1
        }

        func problem(_ message: String, line: Int? = nil) -> ResourceProblem {
            ResourceProblem(.error, SourceLocation(file: file, line: line ?? self.line), message)
        }

        mutating func skipTrivia() throws(ResourceProblem) {
            while let c = peek {
                if c.properties.isWhitespace {
                    advance()
                } else if c == "/", i + 1 < scalars.count, scalars[i + 1] == "*" {
                    let start = line
                    advance()
                    advance()
                    while i < scalars.count, !(scalars[i] == "*" && i + 1 < scalars.count && scalars[i + 1] == "/") { advance() }
                    guard i < scalars.count else { throw problem("unterminated /* comment", line: start) }
                    advance()
                    advance()
                } else if c == "/", i + 1 < scalars.count, scalars[i + 1] == "/" {
                    while let d = peek, d != "\n" { advance() }
                } else {
                    return
                }
            }
        }

        mutating func string(what: String) throws(ResourceProblem) -> String {
            guard let c = peek else { throw problem("expected \(what), found the end of the file") }
            if c == "\"" { return try quoted() }
            var out = String.UnicodeScalarView()
            while let d = peek, Self.isUnquoted(d) {
                out.append(d)
                advance()
            }
            guard !out.isEmpty else { throw problem("expected \(what) in double quotes, found \(Character(c).debugDescription)") }
            return String(out)
        }

        static func isUnquoted(_ c: Unicode.Scalar) -> Bool {
            c.isASCII && (c.properties.isAlphabetic || ("0"..."9").contains(c) || "_$+/:.-".unicodeScalars.contains(c))
        }

        mutating func quoted() throws(ResourceProblem) -> String {
            let start = line
            advance()  // "
            var out = String.UnicodeScalarView()
            var pendingHigh: UInt16?
            while let c = peek {
                advance()
                if c == "\"" {
                    if pendingHigh != nil { throw problem("a \\U escape leaves a lone UTF-16 surrogate", line: start) }
                    return String(out)
                }
                guard c == "\\" else {
                    if pendingHigh != nil { throw problem("a \\U escape leaves a lone UTF-16 surrogate") }
                    out.append(c)
                    continue
                }
                guard let e = peek else { break }
                advance()
                switch e {
                case "a": out.append("\u{07}")
                case "b": out.append("\u{08}")
                case "f": out.append("\u{0C}")
                case "n": out.append("\n")
                case "r": out.append("\r")
                case "t": out.append("\t")
                case "v": out.append("\u{0B}")
                case "U", "u":
                    var hex = ""
                    while hex.count < 4, let h = peek, h.properties.isASCIIHexDigit {
                        hex.unicodeScalars.append(h)
                        advance()
                    }
                    guard let unit = UInt16(hex, radix: 16) else { throw problem("\\U needs hexadecimal digits") }
                    if UTF16.isLeadSurrogate(unit) {
                        pendingHigh = unit
                    } else if UTF16.isTrailSurrogate(unit) {
                        guard let high = pendingHigh else { throw problem("a \\U escape leaves a lone UTF-16 surrogate") }
                        let value = 0x10000 + (UInt32(high - 0xD800) << 10) + UInt32(unit - 0xDC00)
                        if let s = Unicode.Scalar(value) { out.append(s) }
                        pendingHigh = nil
                    } else if let s = Unicode.Scalar(UInt32(unit)) {
                        out.append(s)
                    }
                    continue
                case "0"..."7":
                    var value = e.value - 0x30
                    var n = 1
                    while n < 3, let d = peek, ("0"..."7").contains(d) {
                        value = value * 8 + d.value - 0x30
                        advance()
                        n += 1
                    }
                    if let s = Unicode.Scalar(value) { out.append(s) }
                default:
                    out.append(e)  // \" \\ \' and any other character stand for themselves
                }
                if pendingHigh != nil { throw problem("a \\U escape leaves a lone UTF-16 surrogate") }
            }
            throw problem("unterminated string (opened at line \(start))", line: start)
        }
    }
}
