/// Checks an FCM topic condition such as `'a' in topics && ('b' in topics || !('c' in topics))`,
/// as FCM's topic messaging guide defines them: topics in single quotes followed by
/// `in topics`, the operators `&&`, `||` and `!`, parentheses, and at most five topics.
///
/// ```
/// condition := or
/// or        := and ("||" and)*
/// and       := unary ("&&" unary)*
/// unary     := "!" unary | "(" or ")" | "'" topic "'" "in" "topics"
/// ```
public enum TopicCondition {
    /// Checks `text`; returns the topics it names, in order.
    /// - Throws: why it is not a condition FCM accepts, with the byte offset where it goes wrong.
    public static func check(_ text: String) throws(Invalid) -> [String] {
        var parser = Parser(bytes: Array(text.utf8))
        parser.skipSpace()
        guard !parser.atEnd else { throw Invalid("the condition is empty") }
        try parser.or()
        parser.skipSpace()
        guard parser.atEnd else { throw parser.invalid("expected && or || or the end") }
        guard parser.topics.count <= FCMLimits.conditionTopics else {
            throw Invalid("it names \(parser.topics.count) topics; FCM allows at most \(FCMLimits.conditionTopics)")
        }
        return parser.topics
    }

    public struct Invalid: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0
        var topics: [String] = []
        /// Deeper nesting is refused rather than recursed into.
        var depth = 0

        var atEnd: Bool { index >= bytes.count }

        func invalid(_ what: String) -> Invalid {
            Invalid("\(what) at byte \(index + 1)")
        }

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D { index += 1 }
        }

        mutating func take(_ token: String) -> Bool {
            skipSpace()
            let t = Array(token.utf8)
            guard bytes[index...].starts(with: t) else { return false }
            index += t.count
            return true
        }

        mutating func or() throws(Invalid) {
            try and()
            while take("||") { try and() }
        }

        mutating func and() throws(Invalid) {
            try unary()
            while take("&&") { try unary() }
        }

        mutating func unary() throws(Invalid) {
            depth += 1
            defer { depth -= 1 }
            guard depth <= 64 else { throw invalid("nested too deeply") }
            if take("!") { return try unary() }
            if take("(") {
                try or()
                guard take(")") else { throw invalid("expected )") }
                return
            }
            try topicTest()
        }

        /// `'name' in topics`
        mutating func topicTest() throws(Invalid) {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "'") else {
                throw invalid(atEnd ? "expected a topic in single quotes, found the end" : "expected a topic in single quotes")
            }
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "'") { index += 1 }
            guard index < bytes.count else { throw Invalid("a topic's quote is not closed") }
            let name = String(decoding: bytes[start..<index], as: UTF8.self)
            index += 1
            if let problem = TopicName.problem(name) { throw Invalid("topic '\(name)': \(problem)") }
            guard take("in"), isWordEnd else { throw invalid("expected `in topics` after '\(name)'") }
            guard take("topics"), isWordEnd else { throw invalid("expected `in topics` after '\(name)'") }
            topics.append(name)
        }

        var isWordEnd: Bool {
            guard index < bytes.count else { return true }
            let b = bytes[index]
            return !(b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) && !(b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
        }
    }
}

/// FCM's rule for topic names: `[a-zA-Z0-9-_.~%]{1,900}` (the v1 discovery document), without
/// the `/topics/` prefix.
public enum TopicName {
    /// Why `name` is not a topic name FCM accepts, or nil.
    public static func problem(_ name: String) -> String? {
        if name.isEmpty { return "a topic name is empty" }
        if name.utf8.count > FCMLimits.topicNameLength {
            return "a topic name is \(name.utf8.count) characters; FCM allows \(FCMLimits.topicNameLength)"
        }
        if !name.utf8.allSatisfy(isTopicByte) { return "\"\(name)\" is not a valid topic name ([a-zA-Z0-9-_.~%]+)" }
        return nil
    }

    /// FCM's character class for topic names and analytics labels: `[a-zA-Z0-9-_.~%]`.
    static func isTopicByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"), UInt8(ascii: "%"):
            true
        default: false
        }
    }
}
