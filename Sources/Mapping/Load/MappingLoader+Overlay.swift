import Yams

/// Where the overlay sets a value: its proto path (map keys and free JSON keys as written), and
/// the node, for errors.
struct OverlayLeaf {
    var path: [String]
    var node: Node

    var dotted: String { path.joined(separator: ".") }
}

// The `fcm:` overlay (docs/mapping.md, *Any other FCM field*): FCM's message as its JSON, each
// field checked against FCM's discovery document (``FCMSchema``).
extension MappingLoader {
    /// Fields of `Message` the overlay refuses, with why and what to do instead.
    static let overlayRefusals: [String: (reason: String, hint: String)] = [
        "token": ("is a target", "the mapping's `target:` says who receives the push"),
        "fid": ("is a target", "the mapping's `target:` says who receives the push"),
        "topic": ("is a target", "the mapping's `target:` says who receives the push"),
        "condition": ("is a target", "the mapping's `target:` says who receives the push"),
        "data": ("is the message's data", "use the mapping's `data:`"),
        "android_v2": (
            "is refused: pushbridge renders `android`, and FCM refuses a message with both", "write Android's fields under `fcm.android`"
        ),
    ]

    /// Reads `fcm:` into `mapping.overlay`, once the mapping's other keys are loaded: its leaves
    /// are checked against what those keys render.
    mutating func loadOverlay(_ node: Node, _ m: Node.Mapping, into mapping: inout EventMapping) {
        var leaves: [OverlayLeaf] = []
        let members = overlayMessage(node, type: "Message", path: [], leaves: &leaves)
        checkOverlayLeaves(leaves, m, mapping)
        mapping.overlay = FCMOverlay(members: members)
    }

    /// A message of the schema: each member a field of `type`.
    mutating func overlayMessage(_ node: Node, type: String, path: [String], leaves: inout [OverlayLeaf]) -> [(key: String, value: OverlayValue)] {
        let what = path.isEmpty ? "`fcm`" : "`fcm.\(path.joined(separator: "."))`"
        guard let m = mapping(node, what) else { return [] }
        let fields = FCMSchema.messages[type] ?? [:]
        var out: [(key: String, value: OverlayValue)] = []
        var seen = Set<String>()
        for (k, v) in m {
            guard let raw = k.scalar?.string, !raw.isEmpty else {
                fail(k, "a field name in \(what) must be a string")
                continue
            }
            let name = FCMSchema.protoName(raw)
            let full = path + [name]
            guard let field = fields[name] else {
                let known = fields.keys.sorted()
                let hint = Self.closest(name, among: known).map { "did you mean `\($0)`?" } ?? "FCM's fields here: " + known.joined(separator: ", ")
                fail(k, "unknown field `\(raw)` in \(what)", hint: hint)
                continue
            }
            guard seen.insert(name).inserted else {
                fail(k, "`\(name)` is given twice in \(what)")
                continue
            }
            if let refusal = Self.overlayRefusal(full, field) {
                fail(k, "`fcm.\(full.joined(separator: "."))` \(refusal.reason)", hint: refusal.hint)
                continue
            }
            if let value = overlayField(v, field, path: full, leaves: &leaves) { out.append((name, value)) }
        }
        let required = fields.filter(\.value.required).keys.sorted()
        let missing = required.filter { !seen.contains($0) }
        if !missing.isEmpty {
            fail(
                node, "\(what) needs " + missing.map { "`\($0)`" }.joined(separator: " and "),
                hint: "FCM requires " + required.joined(separator: ", "))
        }
        return out
    }

    static func overlayRefusal(_ path: [String], _ field: FCMSchema.Field) -> (reason: String, hint: String)? {
        if path.count == 1, let refusal = overlayRefusals[path[0]] { return refusal }
        if field.outputOnly { return ("is output only: FCM sets it on the message it accepted", "remove it") }
        if field.deprecated { return ("is deprecated in FCM's API", "remove it; FCM's reference names what replaces it") }
        return nil
    }

    private mutating func overlayField(_ node: Node, _ field: FCMSchema.Field, path: [String], leaves: inout [OverlayLeaf]) -> OverlayValue? {
        let what = "`fcm.\(path.joined(separator: "."))`"
        if field.repeated {
            guard let list = node.sequence else {
                fail(node, "\(what) must be a list")
                return nil
            }
            leaves.append(OverlayLeaf(path: path, node: node))
            let type = Self.overlayType(field.kind, path: path)
            let items = list.compactMap { overlayScalar($0, type ?? .string, what: what, path: path) }
            guard items.count == list.count else { return nil }
            return Self.collapse(.array(items))
        }
        switch field.kind {
        case .message(let type):
            return .object(overlayMessage(node, type: type, path: path, leaves: &leaves))
        case .stringMap:
            return overlayStringMap(node, path: path, leaves: &leaves)
        case .freeObject:
            return freeJSON(node, path: path, leaves: &leaves)
        default:
            leaves.append(OverlayLeaf(path: path, node: node))
            return overlayScalar(node, Self.overlayType(field.kind, path: path) ?? .string, what: what, path: path)
        }
    }

    /// A scalar field's overlay type; a few strings FCM checks further (`color`, https URLs).
    static func overlayType(_ kind: FCMSchema.Kind, path: [String]) -> OverlayType? {
        switch kind {
        case .string:
            let dotted = path.joined(separator: ".")
            if dotted == "android.notification.color" { return .color }
            if ["notification.image", "android.notification.image", "apns.fcm_options.image", "webpush.fcm_options.link"].contains(dotted) {
                return .httpsURL
            }
            return .string
        case .bool: return .bool
        case .int32: return .int32
        case .float: return .float
        case .duration: return .duration
        case .timestamp: return .timestamp
        case .enumeration(let names): return .enumeration(names)
        case .stringMap, .freeObject, .message: return nil
        }
    }

    /// A value of `type`: a literal of it (checked here), or a value from the event, converted
    /// per event.
    mutating func overlayScalar(_ node: Node, _ type: OverlayType, what: String, path: [String]) -> OverlayValue? {
        if node.mapping == nil, node.scalar == nil {
            fail(node, "\(what) must be \(type.expected), or `{field: /pointer}`")
            return nil
        }
        guard let source = source(node, what) else { return nil }
        switch source {
        case .literal(let text):
            guard let json = type.literal(text) else {
                fail(node, "\(what) must be \(type.expected), not \"\(text)\"")
                return nil
            }
            if let problem = Self.overlayLiteralProblem(text, path: path) {
                fail(node, "\(what): \(problem)")
                return nil
            }
            return .json(json)
        case .eventID, .pushID, .digest:
            guard [.string, .json].contains(type) else {
                fail(node, "\(what) must be \(type.expected): the event's ID and a digest's values are strings")
                return nil
            }
            return .event(source, type)
        case .field(_, let fallback):
            if let fallback, type.literal(fallback) == nil { fail(node, "the `default` of \(what) must be \(type.expected)") }
            return .event(source, type)
        }
    }

    /// What FCM refuses in a literal beyond its type.
    static func overlayLiteralProblem(_ text: String, path: [String]) -> String? {
        if path.count > 1, path[path.count - 2] == "color", ["red", "green", "blue", "alpha"].contains(path.last) {
            // google.type.Color: "each component … in the range [0, 1]"
            return (Double(text).map { $0 >= 0 && $0 <= 1 } ?? false) ? nil : "a color component is from 0 to 1"
        }
        switch path.last {
        case "ttl":
            let seconds = Double(text.dropLast()) ?? 0
            return seconds > Double(FCMLimits.maxTTLSeconds) ? "\(text) is over FCM's maximum of 4 weeks (2419200s)" : nil
        case "analytics_label":
            return text.isEmpty || text.utf8.count > 50 || !text.utf8.allSatisfy(TopicName.isTopicByte)
                ? "an analytics label is 1-50 characters of [a-zA-Z0-9-_.~%]" : nil
        default: return nil
        }
    }

    /// A map of strings (`apns.headers`, `webpush.headers`, `android.data`, `webpush.data`):
    /// keys as written, each value a string.
    private mutating func overlayStringMap(_ node: Node, path: [String], leaves: inout [OverlayLeaf]) -> OverlayValue? {
        let what = "`fcm.\(path.joined(separator: "."))`"
        guard let m = mapping(node, what) else { return nil }
        var out: [(key: String, value: OverlayValue)] = []
        for (k, v) in m {
            guard let key = k.scalar?.string, !key.isEmpty else {
                fail(k, "a key of \(what) must be a non-empty string")
                continue
            }
            let dotted = path.joined(separator: ".")
            if dotted == "apns.headers", key.lowercased() == "apns-topic" {
                fail(
                    k, "`fcm.apns.headers.apns-topic` is refused: FCM addresses the app's registered bundle ID",
                    hint: "a different topic can only break delivery; remove it")
                continue
            }
            if dotted.hasSuffix("data"), case .refused? = ReservedDataKey(key) {
                fail(k, "data key \"\(key)\" is reserved by FCM", hint: ReservedDataKey.refusedHint)
                continue
            }
            leaves.append(OverlayLeaf(path: path + [key], node: v))
            guard let value = overlayScalar(v, .string, what: "`fcm.\(dotted).\(key)`", path: path + [key]) else { continue }
            if dotted.hasSuffix("headers"), case .json(.string(let text)) = value, let problem = HeaderValue.problem(text) {
                fail(v, "`fcm.\(dotted).\(key)` is not a valid header value: \(problem)")
            }
            out.append((key, value))
        }
        return Self.collapse(.object(out))
    }

    /// Fixed JSON when nothing in `value` comes from the event.
    static func collapse(_ value: OverlayValue) -> OverlayValue {
        switch value {
        case .json, .event: return value
        case .array(let items):
            var json: [JSONValue] = []
            for item in items {
                guard case .json(let j) = item else { return value }
                json.append(j)
            }
            return .json(.array(json))
        case .object(let members):
            var json: [(key: String, value: JSONValue)] = []
            for (k, v) in members {
                guard case .json(let j) = v else { return value }
                json.append((k, j))
            }
            return .json(.object(json))
        }
    }

    /// The name among `names` closest to `name` (edit distance at most a third of its length,
    /// and at least 2), for "did you mean".
    static func closest(_ name: String, among names: [String]) -> String? {
        func distance(_ a: [Character], _ b: [Character]) -> Int {
            var row = Array(0...b.count)
            for (i, ca) in a.enumerated() {
                var previous = row[0]
                row[0] = i + 1
                for (j, cb) in b.enumerated() {
                    let next = min(row[j + 1] + 1, row[j] + 1, previous + (ca == cb ? 0 : 1))
                    previous = row[j + 1]
                    row[j + 1] = next
                }
            }
            return row[b.count]
        }
        let a = Array(name.lowercased())
        let best = names.map { ($0, distance(a, Array($0.lowercased()))) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= max(2, name.count / 3) else { return nil }
        return best.0
    }
}
