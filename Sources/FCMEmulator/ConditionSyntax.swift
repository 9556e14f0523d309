/// FCM's topic conditions, checked the way the emulator reads the topic messaging guide: topics
/// in single quotes, each followed by `in topics`; `&&`, `||`, `!` and parentheses; at most five
/// topics. Written apart from the mapping core's checker on purpose (the emulator is the oracle).
enum ConditionSyntax {
    enum Token: Equatable {
        case topic(String)
        case inTopics
        case and
        case or
        case not
        case open
        case close
    }

    /// Why `condition` is refused, or nil.
    static func problem(_ condition: String) -> String? {
        guard let tokens = tokenize(condition) else { return "unexpected characters" }
        if tokens.isEmpty { return "empty condition" }
        let topics = tokens.compactMap { if case .topic(let name) = $0 { name } else { nil } }
        if topics.count > MessageValidator.maxConditionTopics { return "more than \(MessageValidator.maxConditionTopics) topics" }
        if let bad = topics.first(where: { MessageValidator.topicNameProblem($0) != nil }) { return "invalid topic name '\(bad)'" }
        var position = 0
        guard expression(tokens, &position, depth: 0), position == tokens.count else { return "syntax error" }
        return nil
    }

    static func tokenize(_ text: String) -> [Token]? {
        var tokens: [Token] = []
        var rest = Substring(text)
        while let c = rest.first {
            if c == " " || c == "\t" || c == "\n" || c == "\r" {
                rest.removeFirst()
            } else if c == "'" {
                rest.removeFirst()
                guard let end = rest.firstIndex(of: "'") else { return nil }
                tokens.append(.topic(String(rest[..<end])))
                rest = rest[rest.index(after: end)...]
            } else if rest.hasPrefix("&&") {
                tokens.append(.and)
                rest.removeFirst(2)
            } else if rest.hasPrefix("||") {
                tokens.append(.or)
                rest.removeFirst(2)
            } else if c == "!" || c == "(" || c == ")" {
                tokens.append(c == "!" ? .not : c == "(" ? .open : .close)
                rest.removeFirst()
            } else {
                let word = rest.prefix { $0.isLetter }
                guard word == "in" else { return nil }
                rest.removeFirst(word.count)
                rest = rest.drop { $0 == " " || $0 == "\t" }
                let next = rest.prefix { $0.isLetter }
                guard next == "topics" else { return nil }
                rest.removeFirst(next.count)
                tokens.append(.inTopics)
            }
        }
        return tokens
    }

    /// term (("&&" | "||") term)*, where a term is "!"* ( "(" expression ")" | topic "in topics" ).
    static func expression(_ tokens: [Token], _ i: inout Int, depth: Int) -> Bool {
        guard depth < 100 else { return false }
        repeat {
            while i < tokens.count, tokens[i] == .not { i += 1 }
            guard i < tokens.count else { return false }
            if tokens[i] == .open {
                i += 1
                guard expression(tokens, &i, depth: depth + 1), i < tokens.count, tokens[i] == .close else { return false }
                i += 1
            } else if case .topic = tokens[i], i + 1 < tokens.count, tokens[i + 1] == .inTopics {
                i += 2
            } else {
                return false
            }
            guard i < tokens.count, tokens[i] == .and || tokens[i] == .or else { return true }
            i += 1
        } while true
    }
}
