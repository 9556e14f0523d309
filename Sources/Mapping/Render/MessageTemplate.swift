/// What a hole needs checked or converted when it is filled.
enum HoleKind: Sendable, Equatable {
    case string
    case integer
    case topic
    case color
    case collapseKey(forAPNs: Bool)
    /// The token of a fan-out target, one per message.
    case fanOut
}

struct Hole: Sendable {
    var source: ValueSource?
    var role: String
    var kind: HoleKind
}

/// Collects holes while a template is compiled; each hole is returned as a sentinel string that
/// the JSON writer escapes to `"\u0001<n>\u0001"`.
final class HoleRecorder {
    private(set) var holes: [Hole] = []

    func hole(_ source: ValueSource, role: String, kind: HoleKind) -> String {
        holes.append(Hole(source: source, role: role, kind: kind))
        return "\u{1}\(holes.count - 1)\u{1}"
    }

    func fanOutHole() -> String {
        holes.append(Hole(source: nil, role: "target tokens", kind: .fanOut))
        return "\u{1}\(holes.count - 1)\u{1}"
    }
}

/// A mapping compiled to byte runs and holes: rendering an event resolves only the holes and
/// copies the rest, instead of building and sorting a JSON tree for every event.
///
/// Made by rendering the mapping once through the tree path with sentinel values, so the two
/// paths cannot disagree on structure; tests check they produce identical bytes.
///
/// A final class so that looking one up per event costs one retain, not a copy of every field.
final class MessageTemplate: Sendable {
    enum Piece: Sendable {
        case bytes([UInt8])
        case hole(Int)
    }

    let pieces: [Piece]
    let holes: [Hole]
    let limit: Int
    let staticToken: String?
    let target: MappingTarget

    /// - Returns: nil if a sentinel cannot be found exactly once per use (e.g. a literal in the
    ///   mapping happens to contain U+0001); the tree path is used then.
    init?(json: [UInt8], holes: [Hole], limit: Int, staticToken: String?, target: MappingTarget) {
        let open: [UInt8] = Array(#""\u0001"#.utf8)
        let close: [UInt8] = Array(#"\u0001""#.utf8)
        var pieces: [Piece] = []
        var seen = Set<Int>()
        var runStart = 0
        var i = 0
        while i < json.count {
            guard json[i] == open[0], json[i...].starts(with: open) else {
                i += 1
                continue
            }
            var j = i + open.count
            var index = 0
            var digits = 0
            while j < json.count, json[j] >= 0x30, json[j] <= 0x39 {
                index = index * 10 + Int(json[j] - 0x30)
                j += 1
                digits += 1
            }
            guard digits > 0, json[j...].starts(with: close), index < holes.count else { return nil }
            if runStart < i { pieces.append(.bytes(Array(json[runStart..<i]))) }
            pieces.append(.hole(index))
            seen.insert(index)
            i = j + close.count
            runStart = i
        }
        if runStart < json.count { pieces.append(.bytes(Array(json[runStart...]))) }
        guard seen.count == holes.count else { return nil }
        self.pieces = pieces
        self.holes = holes
        self.limit = limit
        self.staticToken = staticToken
        self.target = target
    }

    private enum Filled {
        case string(String)
        case int(Int64)
    }

    /// The messages for `event`: holes resolved in the order the tree path resolves them, so
    /// failures are the same.
    func render(_ event: DecodedEvent) throws(MappingFailure) -> [FCMMessage] {
        let r = Resolver(event: event)
        var values: [Filled] = []
        values.reserveCapacity(holes.count)
        var fanOutIndex: Int?
        var tokenIndex: Int?
        for i in holes.indices {
            guard let source = holes[i].source else {
                fanOutIndex = i
                values.append(.string(""))
                continue
            }
            switch holes[i].kind {
            case .string:
                values.append(.string(try r.string(source, role: holes[i].role)))
                if holes[i].role == "target token" { tokenIndex = i }
            case .integer: values.append(.int(try r.integer(source, role: holes[i].role)))
            case .topic: values.append(.string(try r.topic(source)))
            case .color: values.append(.string(try r.color(source)))
            case .collapseKey(let forAPNs): values.append(.string(try r.collapseKey(source, forAPNs: forAPNs)))
            case .fanOut: values.append(.string(""))
            }
        }
        var tokens: [String?] = [nil]
        if case .tokens(let source) = target { tokens = try r.tokens(source) }

        var messages: [FCMMessage] = []
        messages.reserveCapacity(tokens.count)
        for token in tokens {
            if let fanOutIndex, let token { values[fanOutIndex] = .string(token) }
            var out: [UInt8] = []
            out.reserveCapacity(1024)
            for piece in pieces {
                switch piece {
                case .bytes(let b): out.append(contentsOf: b)
                case .hole(let h):
                    switch values[h] {
                    case .string(let s): JSONWriter.writeString(s, into: &out)
                    case .int(let n): out.append(contentsOf: String(n).utf8)
                    }
                }
            }
            guard out.count <= limit else { throw .tooLarge(bytes: out.count, limit: limit) }
            var messageToken = token ?? staticToken
            if let tokenIndex, case .string(let t) = values[tokenIndex] { messageToken = t }
            messages.append(FCMMessage(encoded: out, token: messageToken))
        }
        return messages
    }
}
