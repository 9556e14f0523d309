import Yams

// What FCM would refuse for every event, caught while loading (file:line), and what loads but is
// likely a mistake (warnings): targets, collapse IDs, silent pushes.
extension MappingLoader {
    mutating func loadTarget(_ node: Node) -> MappingTarget? {
        guard let m = mapping(node, "`target`") else { return nil }
        checkKeys(m, allowed: Self.targetKinds + Self.userFilters, in: "`target`")
        let present = Self.targetKinds.filter { m[$0] != nil }
        guard present.count == 1, let kind = present.first, let value = m[kind] else {
            fail(
                node, present.isEmpty ? "`target` names no recipient" : "`target` has more than one kind: \(present.joined(separator: ", "))",
                hint: "give exactly one of fid, fids, token, tokens, topic, condition or user")
            return nil
        }
        if kind != "user", let filter = Self.userFilters.first(where: { m[$0] != nil }) {
            fail(m[filter], "`\(filter)` filters a user's devices: it needs `user`", hint: "remove it, or target `user:`")
        }
        switch kind {
        case "user":
            guard let s = source(value, "target user") else { return nil }
            if case .eventID = s { fail(value, "target user cannot be the event's ID", hint: "`{field: /pointer}` to the user ID") }
            var filter = DeviceFilter()
            if let n = m["platform"] { filter.platforms = names(n, "platform") }
            if let n = m["app"] {
                filter.apps = names(n, "app")
                for app in filter.apps ?? [] where !ProjectName.isValid(app) {
                    fail(n, "app \"\(app)\" is not a project name", hint: "name projects of the config's fcm.projects: letters, digits, - _ .")
                }
            }
            return .user(s, filter)
        case "fid", "token":
            let device: MessageTarget.Kind = kind == "fid" ? .fid : .token
            guard let s = source(value, "target \(kind)") else { return nil }
            if case .literal(let id) = s, id.isEmpty { fail(value, "the \(kind) is empty", hint: "give a \(kind), or `{field: /pointer}` to one") }
            return .device(device, s)
        case "topic":
            guard let s = source(value, "target topic") else { return nil }
            if case .literal(var topic) = s {
                if topic.hasPrefix("/topics/") { topic.removeFirst("/topics/".count) }
                if let problem = TopicName.problem(topic) { fail(value, "target topic: \(problem)") }
            }
            return .topic(s)
        case "condition":
            guard let s = source(value, "target condition") else { return nil }
            if case .literal(let condition) = s {
                do {
                    _ = try TopicCondition.check(condition)
                } catch {
                    fail(
                        value, "target condition: \(error)",
                        hint: "e.g. \"'sports' in topics && ('news' in topics || !('ads' in topics))\", at most 5 topics")
                }
            }
            return .condition(s)
        default:
            let device: MessageTarget.Kind = kind == "fids" ? .fid : .token
            if let list = value.sequence {
                var ids: [String] = []
                for item in list {
                    guard let id = item.scalar?.string, !id.isEmpty else {
                        fail(item, "`\(kind)` lists an empty or non-string \(device.rawValue)")
                        continue
                    }
                    ids.append(id)
                }
                if list.isEmpty {
                    fail(value, "`\(kind)` is an empty list", hint: "list at least one \(device.rawValue), or use `{field: /pointer}`")
                }
                return .devices(device, .literal(ids))
            }
            if let f = value.mapping, let fieldNode = f["field"] {
                checkKeys(f, allowed: ["field"], in: "`\(kind)`")
                return pointer(fieldNode).map { .devices(device, .field($0)) }
            }
            fail(value, "`\(kind)` must be a list of \(device.rawValue)s or `{field: /pointer}` to an array of strings")
            return nil
        }
    }

    /// A `user` target's filter: one name or a non-empty list of them.
    private mutating func names(_ node: Node, _ what: String) -> Set<String>? {
        if let one = node.scalar?.string, !one.isEmpty { return [one] }
        if let list = node.sequence, !list.isEmpty, list.allSatisfy({ !($0.scalar?.string ?? "").isEmpty }) {
            return Set(list.compactMap { $0.scalar?.string })
        }
        fail(node, "`\(what)` must be a name or a non-empty list of names")
        return nil
    }

    /// A literal collapse key or replace ID must be a valid `apns-collapse-id` when it becomes
    /// one; `replace_id` sets Android's tag, so it cannot stand beside `android.tag`.
    mutating func checkCollapseIDs(_ mapping: EventMapping, _ m: Node.Mapping) {
        let ios = mapping.platforms.contains(.ios) && mapping.apns.collapseID == nil
        for (name, source, isAPNsHeader, node) in [
            ("collapse_key", mapping.collapseKey, ios, m["collapse_key"]),
            ("replace_id", mapping.replaceID, ios && mapping.collapseKey == nil, m["replace_id"]),
            ("apns.collapse_id", mapping.apns.collapseID, true, m["apns"]?.mapping?["collapse_id"]),
        ] {
            guard isAPNsHeader, case .literal(let id)? = source, let node else { continue }
            if id.utf8.count > FCMLimits.apnsCollapseIDBytes {
                fail(node, "\(name) is \(id.utf8.count) bytes; it becomes apns-collapse-id, which allows \(FCMLimits.apnsCollapseIDBytes)")
            } else if let problem = HeaderValue.problem(id) {
                fail(node, "\(name) cannot be the apns-collapse-id header: \(problem)")
            }
        }
        if mapping.replaceID != nil, mapping.android.tag != nil, let node = m["replace_id"] {
            fail(
                node, "`replace_id` and `android.tag` both set Android's notification tag",
                hint: "keep one: replace_id sets the tag and apns-collapse-id")
        }
        if mapping.replaceID != nil, mapping.web.tag != nil, let node = m["replace_id"] {
            fail(node, "`replace_id` and `web.tag` both set the web notification's tag", hint: "keep one: replace_id sets it for every platform")
        }
    }

    /// A silent push shows nothing, so options about what is shown would be dropped: refused.
    mutating func checkSilent(_ m: Node.Mapping) {
        for name in ["android", "apns", "web", "replace_id", "image", "interruption", "relevance", "badge"] {
            guard let node = m[name] else { continue }
            fail(
                node, "a silent push shows no notification, so `\(name)` would be dropped",
                hint: "remove `\(name)`, or `silent: true`; a silent push carries `data`, `ttl`, `priority` and `collapse_key`")
        }
    }

    /// Warnings, once the event format is known: a collapse key taken from the event's ID gives
    /// every event its own, and FCM keeps only 4 collapse keys per device, so an offline device
    /// gets an arbitrary 4 of what it missed.
    func warnings(format: EventFormat) -> [MappingLoadError] {
        loadWarnings
            + collapseKeys.compactMap { file, line, column, source in
                let perEvent: Bool =
                    switch source {
                    case .eventID, .pushID: true
                    case .field(let pointer, _): pointer == format.idPointer
                    case .literal, .digest: false
                    }
                guard perEvent else { return nil }
                return MappingLoadError(
                    file: file, line: line, column: column,
                    message:
                        "collapse_key is the event's ID: FCM keeps at most 4 collapse keys per device, so a device offline for more than 4 events gets an arbitrary 4 of them",
                    hint: "use `replace_id: {from: event_id}` to show duplicates once; keep collapse_key for a group such as a chat ID",
                    severity: .warning)
            }
    }
}
