import Dates

/// What a hole needs checked or converted when it is filled.
enum HoleKind: Sendable, Equatable {
    case string
    /// An integer of at least 0.
    case count
    /// The message's target value (device identifier, topic or condition), checked for its kind.
    case target(MessageTarget.Kind)
    case color
    /// A URL, checked to be https.
    case httpsURL
    /// A time from the event, written as RFC 3339.
    case timestamp(MaxAge.EpochUnit)
    /// A web push `Topic` header.
    case webTopic
    case collapseID(forAPNs: Bool)
    /// `apns-expiration`: the render's `now` plus this TTL.
    case expiration(ttl: Int)
    /// `ttl: remaining`: Android's `ttl`, the seconds left of `max_age`.
    case remainingTTL
    /// `ttl: remaining`: `apns-expiration`, now plus the seconds left (0 stays 0).
    case remainingExpiration
    /// `ttl: remaining`: a web push's `TTL` header, the seconds left.
    case remainingSeconds
    /// The device of a fan-out target, one per message.
    case fanOut(MessageTarget.Kind)
    /// An `fcm:` overlay value from the event that is not a string (a boolean, a number, an
    /// enum value, a duration, a timestamp, or free JSON): written as JSON of its type.
    case typed(OverlayType)
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

    func fanOutHole(_ kind: MessageTarget.Kind) -> String {
        holes.append(Hole(source: nil, role: kind.listRole, kind: .fanOut(kind)))
        return "\u{1}\(holes.count - 1)\u{1}"
    }

    /// A hole filled from the time of sending (`apns-expiration`) or the event's age.
    func clockHole(_ kind: HoleKind) -> String {
        holes.append(Hole(source: nil, role: kind == .remainingTTL || kind == .remainingSeconds ? "ttl" : "apns-expiration", kind: kind))
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
    /// Plain values, so walking them retains nothing.
    enum Piece: Sendable {
        /// A run of `text`.
        case bytes(Range<Int>)
        case hole(Int)
        /// For a `user` target: where a device's member of this kind goes (``TargetSplice``).
        case splice(MessageTarget.Kind)
    }

    /// The message with the holes cut out; pieces index into it.
    let text: [UInt8]
    let pieces: [Piece]
    let holes: [Hole]
    let limit: Int
    /// The target, when the mapping names it literally.
    let staticTarget: MessageTarget?
    let target: MappingTarget
    /// The hole of a target taken from the event, if any.
    let targetHole: Int?
    /// For a `user` target, whose `json` has no target: each kind of device's member.
    let splices: [TargetSplice]

    /// - Parameter splices: for a `user` target, where its devices' members go in `json`.
    /// - Returns: nil if a sentinel cannot be found exactly once per use (e.g. a literal in the
    ///   mapping happens to contain U+0001), or a splice falls inside one; the tree path is used then.
    init?(json: [UInt8], holes: [Hole], limit: Int, staticTarget: MessageTarget?, target: MappingTarget, splices: [TargetSplice] = []) {
        let open: [UInt8] = Array(#""\u0001"#.utf8)
        let close: [UInt8] = Array(#"\u0001""#.utf8)
        var pieces: [Piece] = []
        var seen = Set<Int>()
        var runStart = 0
        var i = 0
        // Splices not yet placed, by offset: each becomes a piece of its own, between runs.
        var marks = splices.sorted { $0.offset < $1.offset }[...]
        func run(_ range: Range<Int>) {
            var start = range.lowerBound
            while let mark = marks.first, mark.offset <= range.upperBound {
                if start < mark.offset { pieces.append(.bytes(start..<mark.offset)) }
                pieces.append(.splice(mark.kind))
                start = max(start, mark.offset)
                marks = marks.dropFirst()
            }
            if start < range.upperBound { pieces.append(.bytes(start..<range.upperBound)) }
        }
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
            run(runStart..<i)
            pieces.append(.hole(index))
            seen.insert(index)
            i = j + close.count
            runStart = i
            guard (marks.first?.offset ?? i) >= i else { return nil }  // inside the hole's sentinel
        }
        run(runStart..<json.count)
        guard seen.count == holes.count, marks.isEmpty else { return nil }
        self.text = json
        self.pieces = pieces
        self.holes = holes
        self.limit = limit
        self.staticTarget = staticTarget
        self.target = target
        self.targetHole = holes.firstIndex { if case .target = $0.kind { true } else { false } }
        self.splices = splices
    }

    /// The messages for `event`. Holes are filled in byte order, not in the order the tree path
    /// resolves them, so on a failure the caller asks the tree path which failure it is
    /// (``EventMapping/renderTree(_:)``): the two paths report the same one.
    ///
    /// - Parameter devices: for a `user` target, the user's devices that get the push (not empty).
    func render(
        _ event: DecodedEvent, now: Int64?, remainingTTL: Int? = nil, clock: any WallClock = SystemWallClock(), devices: [UserDevice] = []
    ) throws(MappingFailure) -> [FCMMessage] {
        let r = Resolver(event: event, now: now, remainingTTL: remainingTTL, clock: clock)
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        var targetValue = staticTarget?.value
        // With a fan-out, the bytes after its hole are written to `suffix`.
        var suffix: [UInt8] = []
        var fannedOut = false
        // With a `user` target, where in `out` an FID's and a token's members go.
        var spliceAt = (fid: 0, token: 0)
        try text.withUnsafeBufferPointer { (text) throws(MappingFailure) in
            for piece in pieces {
                switch piece {
                case .bytes(let run):
                    if fannedOut {
                        suffix.append(contentsOf: UnsafeBufferPointer(rebasing: text[run]))
                    } else {
                        out.append(contentsOf: UnsafeBufferPointer(rebasing: text[run]))
                    }
                case .hole(let h):
                    if case .fanOut = holes[h].kind {
                        fannedOut = true
                        suffix.reserveCapacity(1024)
                    } else if fannedOut {
                        try fill(h, r, into: &suffix, target: &targetValue)
                    } else {
                        try fill(h, r, into: &out, target: &targetValue)
                    }
                case .splice(let kind):
                    if kind == .fid { spliceAt.fid = out.count } else { spliceAt.token = out.count }
                }
            }
        }
        if !splices.isEmpty { return try userMessages(out, fidAt: spliceAt.fid, tokenAt: spliceAt.token, devices: devices) }
        let kind = target.kind
        guard case .devices(_, let source) = target else {
            guard out.count <= limit else { throw .tooLarge(bytes: out.count, limit: limit) }
            return [FCMMessage(encoded: out, target: MessageTarget(kind, targetValue ?? ""))]
        }
        let ids = try r.devices(source, kind: kind)
        var messages: [FCMMessage] = []
        messages.reserveCapacity(ids.count)
        for id in ids {
            var message = out
            JSONWriter.writeString(id, into: &message)
            message.append(contentsOf: suffix)
            guard message.count <= limit else { throw .tooLarge(bytes: message.count, limit: limit) }
            messages.append(FCMMessage(encoded: message, target: MessageTarget(kind, id)))
        }
        return messages
    }

    /// Writes hole `h`'s value for the event; remembers the target's. Reads the hole's fields in
    /// place: copying a `Hole` retains its source's pointer and role on every event.
    private func fill(_ h: Int, _ r: Resolver, into out: inout [UInt8], target: inout String?) throws(MappingFailure) {
        switch holes[h].kind {
        case .expiration(let ttl):
            out.append(UInt8(ascii: "\""))
            JSONWriter.writeInteger(r.nowSeconds + Int64(ttl), into: &out)
            out.append(UInt8(ascii: "\""))
        case .remainingTTL:
            out.append(UInt8(ascii: "\""))
            JSONWriter.writeInteger(Int64(r.remaining), into: &out)
            out.append(contentsOf: [UInt8(ascii: "s"), UInt8(ascii: "\"")])
        case .remainingExpiration:
            out.append(UInt8(ascii: "\""))
            JSONWriter.writeInteger(r.remaining == 0 ? 0 : r.nowSeconds + Int64(r.remaining), into: &out)
            out.append(UInt8(ascii: "\""))
        case .remainingSeconds:
            out.append(UInt8(ascii: "\""))
            JSONWriter.writeInteger(Int64(r.remaining), into: &out)
            out.append(UInt8(ascii: "\""))
        case .fanOut: break
        case .string:
            guard let source = holes[h].source else { return }
            try r.writeString(source, role: holes[h].role, into: &out)
        case .count:
            guard let source = holes[h].source else { return }
            JSONWriter.writeInteger(try r.count(source, role: holes[h].role), into: &out)
        case .target(let kind):
            guard let source = holes[h].source else { return }
            let value = try r.target(source, kind: kind)
            target = value
            JSONWriter.writeString(value, into: &out)
        case .color:
            guard let source = holes[h].source else { return }
            JSONWriter.writeString(try r.color(source), into: &out)
        case .httpsURL:
            guard let source = holes[h].source else { return }
            JSONWriter.writeString(try r.httpsURL(source, role: holes[h].role), into: &out)
        case .timestamp(let unit):
            guard case .field(let pointer, _)? = holes[h].source else { return }
            JSONWriter.writeString(try r.timestamp(pointer, unit: unit, role: holes[h].role), into: &out)
        case .webTopic:
            guard let source = holes[h].source else { return }
            JSONWriter.writeString(try r.webTopic(source), into: &out)
        case .collapseID(let forAPNs):
            guard let source = holes[h].source else { return }
            JSONWriter.writeString(try r.collapseID(source, role: holes[h].role, forAPNs: forAPNs), into: &out)
        case .typed(let type):
            guard let source = holes[h].source else { return }
            out.append(contentsOf: JSONWriter.write(try r.typed(source, type, role: holes[h].role)))
        }
    }
}
