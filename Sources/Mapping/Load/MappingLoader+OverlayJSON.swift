import Yams

// The overlay's free JSON (`apns.payload`, `webpush.notification`): any YAML, with values from
// the event keeping their JSON type, and the keys of Apple's `aps` and of the Web Notification
// API checked (``PayloadKey``).
extension MappingLoader {
    /// Free JSON at `path`. An object whose only keys are `field` (and `default`) takes the
    /// event's value; `{value: x}` is `x` as written (for a literal object with a `field` key).
    mutating func freeJSON(_ node: Node, path: [String], leaves: inout [OverlayLeaf]) -> OverlayValue? {
        let dotted = path.joined(separator: ".")
        guard let m = node.mapping else {
            leaves.append(OverlayLeaf(path: path, node: node))
            guard let list = node.sequence else { return .json(Self.yamlJSON(node)) }
            var items: [OverlayValue] = []
            for item in list {
                var inner: [OverlayLeaf] = []
                if let value = freeJSON(item, path: path, leaves: &inner) { items.append(value) }
            }
            return Self.collapse(.array(items))
        }
        let keys = m.keys.compactMap { $0.scalar?.string }
        if keys.contains("field"), Set(keys).isSubset(of: ["field", "default"]) {
            leaves.append(OverlayLeaf(path: path, node: node))
            return source(node, "`fcm.\(dotted)`").map { .event($0, .json) }
        }
        if keys.count == 1, keys.first == "value", let value = m["value"] {
            leaves.append(OverlayLeaf(path: path, node: node))
            return .json(Self.yamlJSON(value))
        }
        let apple = PayloadKey.apple[dotted]
        let web = PayloadKey.web[dotted]
        var out: [(key: String, value: OverlayValue)] = []
        for (k, v) in m {
            guard let key = k.scalar?.string else {
                fail(k, "a key in `fcm.\(dotted)` must be a string")
                continue
            }
            let type = apple?[key] ?? web?[key]
            if let apple, type == nil {
                let hint = Self.closest(key, among: apple.keys.sorted()).map { "did you mean `\($0)`?" }
                fail(k, "unknown key `\(key)` in `fcm.\(dotted)`", hint: hint ?? "Apple's keys: " + apple.keys.sorted().joined(separator: ", "))
                continue
            }
            if let web, type == nil {
                let hint = Self.closest(key, among: web.keys.sorted()).map { "did you mean `\($0)`?" }
                warn(
                    k, "`\(key)` is not an option of the Web Notification API, so browsers ignore it in `fcm.\(dotted)`",
                    hint: hint ?? "the options: " + web.keys.sorted().joined(separator: ", "))
            }
            guard var value = freeJSON(v, path: path + [key], leaves: &leaves) else { continue }
            // A key's value from the event is converted to its type per event, as a literal is checked here.
            if case .event(let source, .json) = value, let converted = type?.overlayType { value = .event(source, converted) }
            if let type, case .json(let json) = value, !type.admits(json) {
                fail(v, "`fcm.\(dotted).\(key)` must be \(type.expected)")
                continue
            }
            out.append((key, value))
        }
        return Self.collapse(.object(out))
    }

    /// A YAML value as the JSON it reads as: plain scalars by YAML's core schema (true, 3, 1.5,
    /// null), quoted ones as strings.
    static func yamlJSON(_ node: Node) -> JSONValue {
        switch node {
        case .scalar(let s):
            guard s.style == .plain else { return .string(s.string) }
            if node.null != nil { return .null }
            if let b = node.bool { return .bool(b) }
            if let i = Int64(s.string) ?? node.int.map(Int64.init) { return .int(i) }
            if let d = node.float, d.isFinite { return .double(d) }
            return .string(s.string)
        case .sequence(let list): return .array(list.map(yamlJSON))
        case .mapping(let m): return .object(m.map { ($0.key.scalar?.string ?? "", yamlJSON($0.value)) })
        default: return .null
        }
    }
}
