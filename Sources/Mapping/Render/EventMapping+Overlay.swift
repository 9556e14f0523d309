// The `fcm:` overlay merged into the rendered message (docs/mapping.md, *Any other FCM field*).
// The loader has already refused an overlay leaf that the mapping's other keys render, so a
// merge only ever adds members.
extension EventMapping {
    /// Merges the overlay into the message's members; values from the event go through `r`, so
    /// they become holes while a template is compiled.
    func mergeOverlay(into members: inout [(key: String, value: JSONValue)], _ r: Resolver) throws(MappingFailure) {
        guard let overlay else { return }
        for (key, value) in overlay.members {
            try Self.merge(key, value, path: key, into: &members, r)
        }
    }

    private static func merge(
        _ key: String, _ value: OverlayValue, path: String, into members: inout [(key: String, value: JSONValue)], _ r: Resolver
    ) throws(MappingFailure) {
        let inner: [(key: String, value: OverlayValue)]? =
            switch value {
            case .object(let inner): inner
            case .json(.object(let json)): json.map { ($0.key, .json($0.value)) }
            default: nil
            }
        if let inner, let i = members.firstIndex(where: { $0.key == key }), case .object(var existing) = members[i].value {
            for (k, v) in inner { try merge(k, v, path: path + "." + k, into: &existing, r) }
            members[i].value = .object(existing)
            return
        }
        let resolved = try resolve(value, path: path, r)
        if let i = members.firstIndex(where: { $0.key == key }) {
            members[i].value = resolved
        } else {
            members.append((key, resolved))
        }
    }

    /// An overlay value as JSON (a hole's sentinel for a value from the event, while compiling).
    static func resolve(_ value: OverlayValue, path: String, _ r: Resolver) throws(MappingFailure) -> JSONValue {
        switch value {
        case .json(let json): return json
        case .event(let source, let type): return try r.overlay(source, type, role: "fcm." + path)
        case .array(let items):
            var out: [JSONValue] = []
            for (i, item) in items.enumerated() { out.append(try resolve(item, path: "\(path)[\(i)]", r)) }
            return .array(out)
        case .object(let members):
            var out: [(key: String, value: JSONValue)] = []
            for (k, v) in members { out.append((k, try resolve(v, path: path + "." + k, r))) }
            return .object(out)
        }
    }
}

extension Resolver {
    /// An overlay value from the event, converted to `type` (a hole while compiling).
    func overlay(_ source: ValueSource, _ type: OverlayType, role: String) throws(MappingFailure) -> JSONValue {
        switch type {
        case .string: return .string(try string(source, role: role))
        case .color: return .string(try color(source))
        case .httpsURL: return .string(try imageURL(source))
        default:
            if let recorder, !source.isLiteral { return .string(recorder.hole(source, role: role, kind: .typed(type))) }
            return try typed(source, type, role: role)
        }
    }

    /// An overlay value from the event, converted to `type`: a missing or null field takes its
    /// default (checked at load), else fails as `missing_field`.
    func typed(_ source: ValueSource, _ type: OverlayType, role: String) throws(MappingFailure) -> JSONValue {
        switch source {
        case .literal(let text): return type.literal(text) ?? .string(text)
        case .eventID: return try type.convert(.string(event.id), field: "event id")
        case .pushID(let push): return try type.convert(.string("\(event.id):\(push)"), field: "push id")
        case .digest(let v): return try type.convert(.string(event.digest?.text(v) ?? ""), field: "digest \(v.rawValue)")
        case .field(let pointer, let fallback):
            let value = pointer.resolve(in: event.data) ?? .null
            if case .null = value {
                guard let fallback else { throw .missingField(field: pointer.description, role: role) }
                return type.literal(fallback) ?? .string(fallback)
            }
            return try type.convert(value, field: pointer.description)
        }
    }
}
