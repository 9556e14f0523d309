/// Where a token starts in the `.proto` text: 1-based line and column. Columns count characters
/// (a tab is one), so an error points at what an editor shows.
struct ProtoTextPosition: Sendable, Equatable {
    var line: Int
    var column: Int

    /// Every parse error names its place first, `line 12:5: …`, so a dead-lettered event's
    /// reason leads straight to the schema's line.
    func error(_ message: String) -> SchemaError {
        SchemaError("line \(line):\(column): \(message)")
    }
}

/// One lexical unit of `.proto` text. Keywords are plain identifiers: protobuf reserves no
/// words, and the grammar decides by position what `message` or `optional` means.
struct ProtoTextToken: Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        case identifier
        /// Decimal, hex (`0x1F`) or octal (`017`) digits as written; no sign (`-` is a symbol).
        case integer
        case float
        /// ``ProtoTextToken/text`` holds the value with its escapes decoded.
        case string
        /// A single punctuation character: `{ } [ ] ( ) < > ; , = . - +` and any other.
        case symbol
        case end
    }

    var kind: Kind
    var text: String
    var position: ProtoTextPosition

    /// How an error shows what it found instead of what it expected.
    var shown: String {
        switch kind {
        case .end: "the end of the text"
        case .string: "a string"
        default: "`\(text)`"
        }
    }

    func isSymbol(_ symbol: String) -> Bool { kind == .symbol && text == symbol }
    func isWord(_ word: String) -> Bool { kind == .identifier && text == word }
}
