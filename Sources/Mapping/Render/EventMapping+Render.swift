extension EventMapping {
    /// The messages for `event`: one, or one per device for a device list.
    ///
    /// Does not apply `max_age`: ``MappingSet/render(_:now:maxAge:)`` does, from the record.
    ///
    /// - Parameters:
    ///   - now: the time of sending, in seconds since the Unix epoch (nil: the clock's, read
    ///     only when needed): a TTL also sets `apns-expiration`, which APNs reads as an absolute
    ///     time.
    ///   - remainingTTL: for `ttl: remaining`, the seconds left of `max_age` (``EventAge``);
    ///     nil: all of it.
    ///   - devices: for a `user` target, the user's devices that pass its filter (non-empty).
    public func render(
        _ event: DecodedEvent, now: Int64? = nil, remainingTTL: Int? = nil, devices: [UserDevice] = []
    ) -> Result<[FCMMessage], MappingFailure> {
        let remaining = remainingTTL ?? maxAge?.seconds
        do {
            if let template, let messages = try? template.render(event, now: now, remainingTTL: remaining) { return .success(messages) }
            // Without a template, or to name the failure as the tree path does.
            return .success(try renderTree(event, now: now, remainingTTL: remaining, devices: devices))
        } catch {
            return .failure(error)
        }
    }

    /// Renders by building the message as a ``JSONValue`` tree. The reference path: templates
    /// are made from it, and mappings without a template use it.
    func renderTree(
        _ event: DecodedEvent, now: Int64? = nil, remainingTTL: Int? = nil, devices: [UserDevice] = []
    ) throws(MappingFailure) -> [FCMMessage] {
        let r = Resolver(event: event, now: now, remainingTTL: remainingTTL ?? maxAge?.seconds)
        let shared = try sharedMembers(r)
        let kind = target.kind
        switch target {
        case .device(_, let source), .topic(let source), .condition(let source):
            return [try finish(shared, target: MessageTarget(kind, try r.target(source, kind: kind)))]
        case .devices(_, let source):
            var messages: [FCMMessage] = []
            for id in try r.devices(source, kind: kind) {
                messages.append(try finish(shared, target: MessageTarget(kind, id)))
            }
            return messages
        case .user(let source, _):
            guard !devices.isEmpty else { throw .noDevices(user: try r.string(source, role: "target user")) }
            var messages: [FCMMessage] = []
            for device in devices {
                var message = try finish(shared, target: MessageTarget(device.kind, device.id))
                message.project = device.app
                messages.append(message)
            }
            return messages
        }
    }

    /// The user a `user` target names in `event`; nil for other targets.
    func user(in event: DecodedEvent) throws(MappingFailure) -> String? {
        guard case .user(let source, _) = target else { return nil }
        let user = try Resolver(event: event, now: nil).string(source, role: "target user")
        guard !user.isEmpty else { throw .noTargets("the user ID from \(Resolver(event: event, now: nil).fieldName(source)) is empty") }
        return user
    }

    /// Compiles the byte template: the message rendered once with a hole for every value that
    /// comes from the event or the clock. Nil if the mapping cannot be rendered without an event
    /// (e.g. an invalid literal); `render` then uses the tree path, which reports the problem
    /// per event.
    func compileTemplate() -> MessageTemplate? {
        let recorder = HoleRecorder()
        let r = Resolver(event: DecodedEvent(type: eventType, id: "", data: .null, format: .json), now: 0, recorder: recorder)
        let kind = target.kind
        do {
            let shared = try sharedMembers(r)
            let value: String
            var staticTarget: MessageTarget?
            switch target {
            case .device(_, let source), .topic(let source), .condition(let source):
                value = try r.target(source, kind: kind)
                if case .literal = source { staticTarget = MessageTarget(kind, value) }
            case .devices: value = recorder.fanOutHole(kind)
            case .user: return nil  // each device has its own kind of identifier: the tree path
            }
            return MessageTemplate(
                json: JSONWriter.write(.object([(kind.rawValue, .string(value))] + shared)), holes: recorder.holes,
                limit: Self.sizeLimit(kind), staticTarget: staticTarget, target: target)
        } catch {
            return nil
        }
    }

    /// FCM's limit for a message to this kind of target: 2048 bytes to a topic or a condition,
    /// 4096 otherwise.
    static func sizeLimit(_ kind: MessageTarget.Kind) -> Int {
        kind == .topic || kind == .condition ? FCMLimits.topicMessageBytes : FCMLimits.messageBytes
    }

    private func finish(_ shared: [(key: String, value: JSONValue)], target: MessageTarget) throws(MappingFailure) -> FCMMessage {
        let message = FCMMessage(json: .object([(target.kind.rawValue, .string(target.value))] + shared), target: target)
        let limit = Self.sizeLimit(target.kind)
        guard message.encoded.count <= limit else { throw .tooLarge(bytes: message.encoded.count, limit: limit) }
        return message
    }

    /// Everything but the target.
    private func sharedMembers(_ r: Resolver) throws(MappingFailure) -> [(key: String, value: JSONValue)] {
        var members: [(key: String, value: JSONValue)] = []
        let ios = platforms.contains(.ios)
        let collapse = try collapseKey.map { (s) throws(MappingFailure) in try r.collapseID(s, role: "collapse_key", forAPNs: ios) }
        // With a collapse key, the group's apns-collapse-id already replaces duplicates on iOS.
        let replace = try replaceID.map { (s) throws(MappingFailure) in try r.collapseID(s, role: "replace_id", forAPNs: ios && collapse == nil) }
        if platforms.contains(.android), case .object(let a) = try androidConfig(r, collapse: collapse, replace: replace), !a.isEmpty {
            members.append(("android", .object(a)))  // a silent push may have no Android options at all
        }
        if ios { members.append(("apns", try apnsConfig(r, collapseID: collapse ?? replace))) }
        if !data.isEmpty {
            var map: [(key: String, value: JSONValue)] = []
            for (key, source) in data { map.append((key, .string(try r.string(source, role: "data.\(key)")))) }
            members.append(("data", .object(map)))
        }
        if let analyticsLabel { members.append(("fcm_options", .object([("analytics_label", .string(analyticsLabel))]))) }
        return members
    }

    private func androidConfig(_ r: Resolver, collapse: String?, replace: String?) throws(MappingFailure) -> JSONValue {
        var config: [(key: String, value: JSONValue)] = []
        if let collapse { config.append(("collapse_key", .string(collapse))) }
        if let highPriority { config.append(("priority", .string(highPriority ? "HIGH" : "NORMAL"))) }
        if let ttl { config.append(("ttl", .string(r.androidTTL(ttl)))) }
        if !silent {
            var n: [(key: String, value: JSONValue)] = []
            if let title {
                n.append(("title_loc_key", .string(title.androidKey)))
                if !title.args.isEmpty { n.append(("title_loc_args", try r.args(title.args, role: "title"))) }
            }
            if let body {
                n.append(("body_loc_key", .string(body.androidKey)))
                if !body.args.isEmpty { n.append(("body_loc_args", try r.args(body.args, role: "body"))) }
            }
            let o = android
            for (key, source) in [
                ("channel_id", o.channelID), ("sound", o.sound), ("tag", o.tag), ("click_action", o.clickAction),
                ("icon", o.icon), ("image", o.image),
            ] {
                if let source { n.append((key, .string(try r.string(source, role: "android.\(key)")))) }
            }
            if let replace { n.append(("tag", .string(replace))) }  // the loader refuses it beside android.tag
            if let color = o.color { n.append(("color", .string(try r.color(color)))) }
            config.append(("notification", .object(n)))
        }
        return .object(config)
    }

    private func apnsConfig(_ r: Resolver, collapseID: String?) throws(MappingFailure) -> JSONValue {
        var headers: [(key: String, value: JSONValue)] = []
        var aps: [(key: String, value: JSONValue)] = []
        if silent {
            headers.append(("apns-priority", .string("5")))
            headers.append(("apns-push-type", .string("background")))
            aps.append(("content-available", .int(1)))
        } else {
            if let highPriority { headers.append(("apns-priority", .string(highPriority ? "10" : "5"))) }
            headers.append(("apns-push-type", .string("alert")))
            var alert: [(key: String, value: JSONValue)] = []
            if let title {
                alert.append(("title-loc-key", .string(title.iosKey)))
                if !title.args.isEmpty { alert.append(("title-loc-args", try r.args(title.args, role: "title"))) }
            }
            if let body {
                alert.append(("loc-key", .string(body.iosKey)))
                if !body.args.isEmpty { alert.append(("loc-args", try r.args(body.args, role: "body"))) }
            }
            aps.append(("alert", .object(alert)))
            if let badge = apns.badge { aps.append(("badge", try r.integerValue(badge, role: "apns.badge"))) }
            for (key, source) in [("sound", apns.sound), ("category", apns.category), ("thread-id", apns.threadID)] {
                if let source { aps.append((key, .string(try r.string(source, role: "apns.\(key)")))) }
            }
            if apns.mutableContent { aps.append(("mutable-content", .int(1))) }
        }
        if let collapseID { headers.append(("apns-collapse-id", .string(collapseID))) }
        // Android's ttl does not reach APNs, whose default is 30 days: the same TTL as an
        // absolute expiry, so both platforms give up together (0: deliver now or never).
        if let ttl { headers.append(("apns-expiration", .string(r.expiration(ttl)))) }
        return .object([("headers", .object(headers)), ("payload", .object([("aps", .object(aps))]))])
    }

    static func isColor(_ s: String) -> Bool {
        let b = Array(s.utf8)
        return b.count == 7 && b[0] == UInt8(ascii: "#")
            && b.dropFirst().allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46)
            }
    }
}

/// Resolves value sources against one event.
struct Resolver {
    let event: DecodedEvent
    /// Seconds since the Unix epoch, for `apns-expiration`; nil: read the clock when needed.
    let now: Int64?
    /// `ttl: remaining`'s seconds for this event (``EventAge``).
    var remainingTTL: Int? = nil
    /// Set while compiling a template: values from the event become holes.
    var recorder: HoleRecorder? = nil

    func fieldName(_ source: ValueSource) -> String {
        switch source {
        case .field(let p, _): p.description
        case .eventID: "event id"
        case .literal: "literal"
        }
    }

    func string(_ source: ValueSource, role: String) throws(MappingFailure) -> String {
        if let recorder, !source.isLiteral { return recorder.hole(source, role: role, kind: .string) }
        switch source {
        case .literal(let s): return s
        case .eventID: return event.id
        case .field(let pointer, let fallback):
            let value = pointer.resolve(in: event.data) ?? .null
            if case .null = value {
                guard let fallback else { throw .missingField(field: pointer.description, role: role) }
                return fallback
            }
            guard let s = Stringify.scalar(value) else {
                throw .wrongType(field: pointer.description, expected: "a string, number or boolean", found: value.typeName)
            }
            return s
        }
    }

    /// Writes what ``string(_:role:)`` returns as a JSON string, without making a String for
    /// the common cases.
    func writeString(_ source: ValueSource, role: String, into out: inout [UInt8]) throws(MappingFailure) {
        if case .field(let pointer, _) = source {
            switch pointer.resolve(in: event.data) {
            case .string(let s)?:
                JSONWriter.writeString(s, into: &out)
                return
            case .int(let i)?:
                out.append(UInt8(ascii: "\""))
                JSONWriter.writeInteger(i, into: &out)
                out.append(UInt8(ascii: "\""))
                return
            default: break
            }
        }
        JSONWriter.writeString(try string(source, role: role), into: &out)
    }

    func args(_ sources: [ValueSource], role: String) throws(MappingFailure) -> JSONValue {
        var out: [JSONValue] = []
        out.reserveCapacity(sources.count)
        for (i, s) in sources.enumerated() { out.append(.string(try string(s, role: "\(role) arg \(i + 1)"))) }
        return .array(out)
    }

    /// An integer value (`badge`), or its hole while compiling a template.
    func integerValue(_ source: ValueSource, role: String) throws(MappingFailure) -> JSONValue {
        if let recorder, !source.isLiteral { return .string(recorder.hole(source, role: role, kind: .integer)) }
        return .int(try integer(source, role: role))
    }

    /// The message's target value, checked for its kind: a device identifier is a non-empty
    /// JSON string (never a number or a boolean turned into one); a topic a valid name (a
    /// leading `/topics/` removed); a condition a valid condition.
    func target(_ source: ValueSource, kind: MessageTarget.Kind) throws(MappingFailure) -> String {
        let role = kind.role
        if let recorder, !source.isLiteral { return recorder.hole(source, role: role, kind: .target(kind)) }
        switch kind {
        case .fid, .token:
            if case .field(let pointer, let fallback) = source {
                let value = pointer.resolve(in: event.data) ?? .null
                if case .null = value {
                    guard let fallback, !fallback.isEmpty else { throw .missingField(field: pointer.description, role: role) }
                    return fallback
                }
                guard case .string(let id) = value else {
                    throw .wrongType(field: pointer.description, expected: "a non-empty string (\(kind.rawValue))", found: value.typeName)
                }
                guard !id.isEmpty else { throw .noTargets("\(pointer) is an empty string") }
                return id
            }
            let id = try string(source, role: role)
            guard !id.isEmpty else { throw .noTargets("the \(kind.rawValue) from \(fieldName(source)) is empty") }
            return id
        case .topic:
            var topic = try string(source, role: role)
            if topic.hasPrefix("/topics/") { topic.removeFirst("/topics/".count) }
            if let problem = TopicName.problem(topic) { throw .invalidValue(field: fieldName(source), reason: problem) }
            return topic
        case .condition:
            let condition = try string(source, role: role)
            do {
                _ = try TopicCondition.check(condition)
            } catch {
                throw .invalidValue(field: fieldName(source), reason: "not a topic condition FCM accepts: \(error)")
            }
            return condition
        }
    }

    /// A `#rrggbb` colour, checked.
    func color(_ source: ValueSource) throws(MappingFailure) -> String {
        if let recorder, !source.isLiteral { return recorder.hole(source, role: "android.color", kind: .color) }
        let value = try string(source, role: "android.color")
        guard EventMapping.isColor(value) else { throw .invalidValue(field: fieldName(source), reason: "\"\(value)\" is not a #rrggbb color") }
        return value
    }

    /// A collapse key or replace ID. When it becomes `apns-collapse-id`, an HTTP/2 header of
    /// APNs, it must fit in 64 bytes and be a valid header value.
    func collapseID(_ source: ValueSource, role: String, forAPNs: Bool) throws(MappingFailure) -> String {
        if let recorder, !source.isLiteral { return recorder.hole(source, role: role, kind: .collapseID(forAPNs: forAPNs)) }
        let id = try string(source, role: role)
        guard forAPNs else { return id }
        if id.utf8.count > FCMLimits.apnsCollapseIDBytes {
            throw .invalidValue(
                field: fieldName(source), reason: "\(role) is \(id.utf8.count) bytes; apns-collapse-id allows \(FCMLimits.apnsCollapseIDBytes)")
        }
        if let problem = HeaderValue.problem(id) {
            throw .invalidValue(field: fieldName(source), reason: "\(role) cannot be the apns-collapse-id header: \(problem)")
        }
        return id
    }

    /// The time of sending: the one given, else the clock's (most mappings never ask).
    var nowSeconds: Int64 { now ?? EpochClock.seconds() }

    /// The seconds of `ttl: remaining` (0 if nothing said: deliver now or never).
    var remaining: Int { remainingTTL ?? 0 }

    /// Android's `ttl`, `3600s`; for `ttl: remaining`, a hole while compiling a template.
    func androidTTL(_ ttl: EventMapping.TTL) -> String {
        switch ttl {
        case .seconds(let seconds): return "\(seconds)s"
        case .remaining:
            if let recorder { return recorder.clockHole(.remainingTTL) }
            return "\(remaining)s"
        }
    }

    /// `apns-expiration` for a TTL: `0` stays 0 (deliver now or never); otherwise now + TTL, in
    /// seconds since the epoch.
    func expiration(_ ttl: EventMapping.TTL) -> String {
        switch ttl {
        case .seconds(let seconds):
            if seconds == 0 { return "0" }
            if let recorder { return recorder.clockHole(.expiration(ttl: seconds)) }
            return String(nowSeconds + Int64(seconds))
        case .remaining:
            if let recorder { return recorder.clockHole(.remainingExpiration) }
            return remaining == 0 ? "0" : String(nowSeconds + Int64(remaining))
        }
    }

    func integer(_ source: ValueSource, role: String) throws(MappingFailure) -> Int64 {
        if case .field(let pointer, _) = source, case .int(let i)? = pointer.resolve(in: event.data) { return i }
        let text = try string(source, role: role)
        guard let i = Int64(text) else { throw .wrongType(field: fieldName(source), expected: "integer", found: "\"\(text)\"") }
        return i
    }

    func devices(_ source: DeviceListSource, kind: MessageTarget.Kind) throws(MappingFailure) -> [String] {
        switch source {
        case .literal(let list): return list
        case .field(let pointer):
            let role = kind.listRole
            guard let value = pointer.resolve(in: event.data) else { throw .missingField(field: pointer.description, role: role) }
            guard case .array(let items) = value else {
                throw .wrongType(field: pointer.description, expected: "array of strings", found: value.typeName)
            }
            var ids: [String] = []
            for item in items {
                guard case .string(let id) = item, !id.isEmpty else {
                    throw .wrongType(
                        field: pointer.description, expected: "array of non-empty strings", found: "an array containing \(item.typeName)")
                }
                ids.append(id)
            }
            guard !ids.isEmpty else { throw .noTargets("\(pointer) is an empty list") }
            return ids
        }
    }
}

/// What HTTP/2 allows in a header value (RFC 9113 §8.2.1): FCM passes `apns.headers` to APNs as
/// HTTP/2 headers.
enum HeaderValue {
    static func problem(_ value: String) -> String? {
        var value = value
        return value.withUTF8 { bytes in  // contiguous: a byte loop, not String.UTF8View's indexing
            if bytes.contains(where: { $0 == 0x00 || $0 == 0x0A || $0 == 0x0D }) { return "it contains a NUL, CR or LF" }
            if let first = bytes.first, first == 0x20 || first == 0x09 { return "it starts with whitespace" }
            if let last = bytes.last, last == 0x20 || last == 0x09 { return "it ends with whitespace" }
            return nil
        }
    }
}

extension MessageTarget.Kind {
    /// What a failure names the target by: literals, so the hot path allocates no string.
    var role: String {
        switch self {
        case .fid: "target fid"
        case .token: "target token"
        case .topic: "target topic"
        case .condition: "target condition"
        }
    }

    /// The same for a fan-out list.
    var listRole: String { self == .fid ? "target fids" : "target tokens" }
}
