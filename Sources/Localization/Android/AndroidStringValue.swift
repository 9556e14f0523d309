/// The text of an Android string resource as aapt2 compiles it, and what aapt2 refuses in it.
/// Pure.
///
/// aapt2 (`ResourceUtils::StringBuilder::AppendText`, AOSP `tools/aapt2`) reads the value freed
/// of XML entities and markup:
/// - `\'` `\"` `\\` `\@` `\?` `\#` stand for the character, `\n` `\t` for a newline and a tab,
///   `\uXXXX` for a code point; a backslash before any other character is dropped, the
///   character kept (`\r` is `r`), and a lone trailing backslash is dropped;
/// - a double quote is never shown: it starts or ends a quoted section, inside which whitespace
///   is kept and an apostrophe is allowed;
/// - outside quotes, whitespace runs collapse to one space, trimmed at both ends;
/// - an apostrophe outside quotes is an error (`unescaped apostrophe in string`), and so is a
///   `\u` followed by something other than hexadecimal digits (`invalid unicode escape
///   sequence in string`): the build stops, so no build of the app has the file.
struct AndroidStringValue {
    /// Something aapt2 refuses or reads otherwise than meant, `lineOffset` lines into the value.
    struct Problem: Equatable {
        var severity: Severity
        var lineOffset: Int
        var message: String
    }

    var text = ""
    var problems: [Problem] = []

    init(_ raw: String) {
        var quoted = false
        var pendingSpace = false
        var lines = 0
        var unmatchedQuoteLine: Int?
        var scalars = raw.unicodeScalars.makeIterator()
        func flushSpace() {
            if pendingSpace && !text.isEmpty { text += " " }
            pendingSpace = false
        }
        while let c = scalars.next() {
            switch c {
            case "\\":
                flushSpace()
                guard let e = scalars.next() else { break }
                switch e {
                case "n": text += "\n"
                case "t": text += "\t"
                case "u":
                    // Up to four hex digits (fewer at the end of the text are accepted).
                    var value: UInt32 = 0
                    var digits = ""
                    var refused: Unicode.Scalar?
                    while digits.unicodeScalars.count < 4, let h = scalars.next() {
                        guard h.properties.isASCIIHexDigit, let d = UInt32(String(h), radix: 16) else {
                            refused = h
                            break
                        }
                        digits.unicodeScalars.append(h)
                        value = value * 16 + d
                    }
                    if let h = refused {
                        problems.append(
                            Problem(
                                severity: .error, lineOffset: lines,
                                message:
                                    "\\u\(digits)\(h) is not a \\uXXXX escape (four hexadecimal digits): aapt2 stops with \"invalid unicode escape sequence in string\""
                            ))
                        if h == "\n" { lines += 1 }
                        text.unicodeScalars.append(h)
                    } else if !digits.isEmpty, let s = Unicode.Scalar(value) {
                        text.unicodeScalars.append(s)
                    }
                default:
                    if e == "\n" { lines += 1 }
                    text.unicodeScalars.append(e)  // \' \" \\ \@ \? \# and any other character
                }
            case "\"":
                flushSpace()
                quoted.toggle()
                unmatchedQuoteLine = quoted ? lines : nil
            case "'" where !quoted:
                flushSpace()
                problems.append(
                    Problem(
                        severity: .error, lineOffset: lines,
                        message:
                            "an apostrophe outside double quotes: aapt2 stops with \"unescaped apostrophe in string\"; write \\' (or put the whole text in double quotes)"
                    ))
                text += "'"
            case " ", "\t", "\n", "\r":
                if c == "\n" { lines += 1 }
                if quoted { text.unicodeScalars.append(c) } else { pendingSpace = true }
            default:
                flushSpace()
                text.unicodeScalars.append(c)
            }
        }
        if let line = unmatchedQuoteLine {
            problems.append(
                Problem(
                    severity: .warning, lineOffset: line,
                    message:
                        "a double quote with no closing one: aapt2 does not show it, and keeps the whitespace of everything after it; write \\\" for a quotation mark"
                ))
        }
    }

    /// aapt2's `ResourceUtils::ParseBool`: `true`/`TRUE`/`True` or `false`/`FALSE`/`False`,
    /// spaces around allowed; nil for anything else (which aapt2 refuses).
    static func bool(_ value: String) -> Bool? {
        return switch value.trimmingWhitespace {
        case "true", "TRUE", "True": true
        case "false", "FALSE", "False": false
        default: nil
        }
    }
}
