/// Finds the `import "path";` statements of `.proto` source text, so its imports can be loaded
/// (and handed to ``ProtoTextParser``, which wants them parsed first) before the file itself.
///
/// Not a parser: it skips comments and string literals and takes a string that follows
/// `import` (and `weak` / `public`) at the start of a statement. A file it misreads still
/// fails cleanly: the text parser then reports the name it cannot resolve.
enum ProtoImportScanner {
    static func imports(_ text: String) -> [String] {
        let bytes = Array(text.utf8)
        var found: [String] = []
        var i = 0
        var atStatementStart = true
        var pendingImport = false
        while i < bytes.count {
            let byte = bytes[i]
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                i += 1
            case UInt8(ascii: "/") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "/"):
                while i < bytes.count, bytes[i] != 0x0A { i += 1 }
            case UInt8(ascii: "/") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "*"):
                i += 2
                while i + 1 < bytes.count, !(bytes[i] == UInt8(ascii: "*") && bytes[i + 1] == UInt8(ascii: "/")) { i += 1 }
                i += 2
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                let (content, next) = literal(bytes, from: i)
                if pendingImport { found.append(content) }
                pendingImport = false
                atStatementStart = false
                i = next
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"):
                let start = i
                while i < bytes.count, isIdentifierByte(bytes[i]) { i += 1 }
                let word = String(decoding: bytes[start..<i], as: UTF8.self)
                if atStatementStart, word == "import" {
                    pendingImport = true
                } else if !(pendingImport && (word == "weak" || word == "public")) {
                    pendingImport = false
                }
                atStatementStart = false
            default:
                atStatementStart = byte == UInt8(ascii: ";") || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "}")
                pendingImport = false
                i += 1
            }
        }
        return found
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// A quoted string's content (a backslash keeps the next byte as it is) and where it ends.
    private static func literal(_ bytes: [UInt8], from start: Int) -> (String, Int) {
        let quote = bytes[start]
        var content: [UInt8] = []
        var i = start + 1
        while i < bytes.count, bytes[i] != quote, bytes[i] != 0x0A {
            if bytes[i] == UInt8(ascii: "\\"), i + 1 < bytes.count { i += 1 }
            content.append(bytes[i])
            i += 1
        }
        return (String(decoding: content, as: UTF8.self), i + 1)
    }
}
