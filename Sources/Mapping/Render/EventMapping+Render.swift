extension EventMapping {
    /// The messages for `event`: one, or one per token for a token list.
    public func render(_ event: DecodedEvent) -> Result<[FCMMessage], MappingFailure> {
        do {
            if let template, let messages = try? template.render(event) { return .success(messages) }
            // Without a template, or to name the failure as the tree path does.
            return .success(try renderTree(event))
        } catch {
            return .failure(error)
        }
    }

    /// Renders by building the message as a ``JSONValue`` tree. The reference path: templates
    /// are made from it, and mappings without a template use it.
    func renderTree(_ event: DecodedEvent) throws(MappingFailure) -> [FCMMessage] {
        let r = Resolver(event: event)
        let shared = try sharedMembers(r)
        var messages: [FCMMessage] = []
        switch target {
        case .token(let source):
            let token = try r.string(source, role: "target token")
            messages.append(try finish(shared, target: ("token", .string(token)), token: token))
        case .tokens(let source):
            let tokens = try r.tokens(source)
            for token in tokens {
                messages.append(try finish(shared, target: ("token", .string(token)), token: token))
            }
        case .topic(let source):
            messages.append(try finish(shared, target: ("topic", .string(try r.topic(source))), token: nil))
        case .condition(let source):
            messages.append(try finish(shared, target: ("condition", .string(try r.string(source, role: "target condition"))), token: nil))
        }
        return messages
    }

    /// Compiles the byte template: the message rendered once with a hole for every value that
    /// comes from the event. Nil if the mapping cannot be rendered without an event (e.g. an
    /// invalid literal); `render` then uses the tree path, which reports the problem per event.
    func compileTemplate() -> MessageTemplate? {
        let recorder = HoleRecorder()
        let r = Resolver(event: DecodedEvent(type: eventType, id: "", data: .null, format: .json), recorder: recorder)
        do {
            let shared = try sharedMembers(r)
            let targetMember: (key: String, value: JSONValue)
            var staticToken: String?
            switch target {
            case .token(let source):
                targetMember = ("token", .string(try r.string(source, role: "target token")))
                if case .literal(let t) = source { staticToken = t }
            case .tokens: targetMember = ("token", .string(recorder.fanOutHole()))
            case .topic(let source): targetMember = ("topic", .string(try r.topic(source)))
            case .condition(let source): targetMember = ("condition", .string(try r.string(source, role: "target condition")))
            }
            return MessageTemplate(
                json: JSONWriter.write(.object([targetMember] + shared)), holes: recorder.holes,
                limit: targetMember.key == "topic" ? FCMLimits.topicMessageBytes : FCMLimits.messageBytes,
                staticToken: staticToken, target: target)
        } catch {
            return nil
        }
    }

    private func finish(_ shared: [(key: String, value: JSONValue)], target: (key: String, value: JSONValue), token: String?) throws(MappingFailure) -> FCMMessage {
        let message = FCMMessage(json: .object([target] + shared), token: token)
        let limit = target.key == "topic" ? FCMLimits.topicMessageBytes : FCMLimits.messageBytes
        guard message.encoded.count <= limit else { throw .tooLarge(bytes: message.encoded.count, limit: limit) }
        return message
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

    /// Everything but the target.
    private func sharedMembers(_ r: Resolver) throws(MappingFailure) -> [(key: String, value: JSONValue)] {
        var members: [(key: String, value: JSONValue)] = []
        let collapse = try collapseKey.map { (s) throws(MappingFailure) in try r.collapseKey(s, forAPNs: platforms.contains(.ios)) }
        if platforms.contains(.android), case .object(let a) = try androidConfig(r, collapse: collapse), !a.isEmpty {
            members.append(("android", .object(a)))  // a silent push may have no Android options at all
        }
        if platforms.contains(.ios) { members.append(("apns", try apnsConfig(r, collapse: collapse))) }
        if !data.isEmpty {
            var map: [(key: String, value: JSONValue)] = []
            for (key, source) in data { map.append((key, .string(try r.string(source, role: "data.\(key)")))) }
            members.append(("data", .object(map)))
        }
        if let analyticsLabel { members.append(("fcm_options", .object([("analytics_label", .string(analyticsLabel))]))) }
        return members
    }

    private func androidConfig(_ r: Resolver, collapse: String?) throws(MappingFailure) -> JSONValue {
        var config: [(key: String, value: JSONValue)] = []
        if let collapse { config.append(("collapse_key", .string(collapse))) }
        if let highPriority { config.append(("priority", .string(highPriority ? "HIGH" : "NORMAL"))) }
        if let ttlSeconds { config.append(("ttl", .string("\(ttlSeconds)s"))) }
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
            for (key, source) in [("channel_id", o.channelID), ("sound", o.sound), ("tag", o.tag), ("click_action", o.clickAction),
                                  ("icon", o.icon), ("image", o.image)] {
                if let source { n.append((key, .string(try r.string(source, role: "android.\(key)")))) }
            }
            if let color = o.color { n.append(("color", .string(try r.color(color)))) }
            config.append(("notification", .object(n)))
        }
        return .object(config)
    }

    private func apnsConfig(_ r: Resolver, collapse: String?) throws(MappingFailure) -> JSONValue {
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
        if let collapse { headers.append(("apns-collapse-id", .string(collapse))) }
        if ttlSeconds == 0 { headers.append(("apns-expiration", .string("0"))) }
        return .object([("headers", .object(headers)), ("payload", .object([("aps", .object(aps))]))])
    }

    static func isColor(_ s: String) -> Bool {
        let b = Array(s.utf8)
        return b.count == 7 && b[0] == UInt8(ascii: "#") && b.dropFirst().allSatisfy {
            ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46)
        }
    }
}

/// Resolves value sources against one event.
struct Resolver {
    let event: DecodedEvent
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

    /// A topic name: a leading `/topics/` removed, and checked.
    func topic(_ source: ValueSource) throws(MappingFailure) -> String {
        if let recorder, !source.isLiteral { return recorder.hole(source, role: "target topic", kind: .topic) }
        var topic = try string(source, role: "target topic")
        if topic.hasPrefix("/topics/") { topic.removeFirst("/topics/".count) }
        guard !topic.isEmpty, topic.utf8.allSatisfy(EventMapping.isTopicByte) else {
            throw .invalidValue(field: fieldName(source), reason: "\"\(topic)\" is not a valid topic name ([a-zA-Z0-9-_.~%]+)")
        }
        return topic
    }

    /// A `#rrggbb` colour, checked.
    func color(_ source: ValueSource) throws(MappingFailure) -> String {
        if let recorder, !source.isLiteral { return recorder.hole(source, role: "android.color", kind: .color) }
        let value = try string(source, role: "android.color")
        guard EventMapping.isColor(value) else { throw .invalidValue(field: fieldName(source), reason: "\"\(value)\" is not a #rrggbb color") }
        return value
    }

    /// A collapse key; at most 64 bytes when it also becomes `apns-collapse-id`.
    func collapseKey(_ source: ValueSource, forAPNs: Bool) throws(MappingFailure) -> String {
        if let recorder, !source.isLiteral { return recorder.hole(source, role: "collapse_key", kind: .collapseKey(forAPNs: forAPNs)) }
        let key = try string(source, role: "collapse_key")
        if forAPNs, key.utf8.count > FCMLimits.apnsCollapseIDBytes {
            throw .invalidValue(field: fieldName(source), reason: "collapse key is \(key.utf8.count) bytes; apns-collapse-id allows \(FCMLimits.apnsCollapseIDBytes)")
        }
        return key
    }

    func integer(_ source: ValueSource, role: String) throws(MappingFailure) -> Int64 {
        if case .field(let pointer, _) = source, case .int(let i)? = pointer.resolve(in: event.data) { return i }
        let text = try string(source, role: role)
        guard let i = Int64(text) else { throw .wrongType(field: fieldName(source), expected: "integer", found: "\"\(text)\"") }
        return i
    }

    func tokens(_ source: TokensSource) throws(MappingFailure) -> [String] {
        switch source {
        case .literal(let list): return list
        case .field(let pointer):
            guard let value = pointer.resolve(in: event.data) else { throw .missingField(field: pointer.description, role: "target tokens") }
            guard case .array(let items) = value else { throw .wrongType(field: pointer.description, expected: "array of strings", found: value.typeName) }
            var tokens: [String] = []
            for item in items {
                guard case .string(let t) = item, !t.isEmpty else {
                    throw .wrongType(field: pointer.description, expected: "array of strings", found: "an array containing \(item.typeName)")
                }
                tokens.append(t)
            }
            guard !tokens.isEmpty else { throw .noTargets("\(pointer) is an empty list") }
            return tokens
        }
    }
}
