/// An RFC 6901 JSON Pointer, e.g. `/user/name` or `/items/0/id`.
public struct JSONPointer: Sendable, Hashable, CustomStringConvertible {
    /// The unescaped reference tokens.
    public let tokens: [String]
    public let description: String

    /// Parses a pointer. The empty string is the whole document.
    /// - Returns: nil if it does not start with `/` or has a `~` not followed by `0` or `1`.
    public init?(_ text: String) {
        description = text
        guard !text.isEmpty else {
            tokens = []
            return
        }
        guard text.hasPrefix("/") else { return nil }
        var result: [String] = []
        for raw in text.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            var token = ""
            var iterator = raw.makeIterator()
            while let c = iterator.next() {
                if c == "~" {
                    switch iterator.next() {
                    case "0": token.append("~")
                    case "1": token.append("/")
                    default: return nil
                    }
                } else {
                    token.append(c)
                }
            }
            result.append(token)
        }
        tokens = result
    }

    /// The pointer to `tokens`, each escaped as RFC 6901 says (`~` as `~0`, `/` as `~1`).
    public init(tokens: [String]) {
        self.tokens = tokens
        var text = ""
        for token in tokens {
            text += "/"
            for c in token {
                switch c {
                case "~": text += "~0"
                case "/": text += "~1"
                default: text.append(c)
                }
            }
        }
        description = text
    }

    /// The value the pointer refers to in `document`, or nil if there is none.
    public func resolve(in document: JSONValue) -> JSONValue? {
        var current = document
        for token in tokens {
            switch current {
            case .object(let members):
                // Lengths first: unequal Strings otherwise take the slow comparison.
                let length = token.utf8.count
                guard let next = members.first(where: { $0.key.utf8.count == length && $0.key == token })?.value else { return nil }
                current = next
            case .array(let items):
                // RFC 6901: decimal index without leading zeros.
                guard let index = Int(token), index >= 0, index < items.count,
                    token == "0" || !token.hasPrefix("0")
                else { return nil }
                current = items[index]
            default:
                return nil
            }
        }
        return current
    }
}
