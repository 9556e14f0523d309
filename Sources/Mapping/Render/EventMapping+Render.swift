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
    func sharedMembers(_ r: Resolver) throws(MappingFailure) -> [(key: String, value: JSONValue)] {
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
        try mergeOverlay(into: &members, r)
        return members
    }

    private func androidConfig(_ r: Resolver, collapse: String?, replace: String?) throws(MappingFailure) -> JSONValue {
        var config: [(key: String, value: JSONValue)] = []
        if let collapse { config.append(("collapse_key", .string(collapse))) }
        if let highPriority { config.append(("priority", .string(highPriority ? "HIGH" : "NORMAL"))) }
        if let ttl { config.append(("ttl", .string(r.androidTTL(ttl)))) }
        if !silent {
            var n: [(key: String, value: JSONValue)] = []
            for (role, text) in [("title", title), ("body", body)] {
                guard let text else { continue }
                if let key = text.key {
                    // Never the fallback beside the key: Android would show it and never look the key up.
                    n.append(("\(role)_loc_key", .string(key.androidKey)))
                    if !key.args.isEmpty { n.append(("\(role)_loc_args", try r.args(key.args, role: role))) }
                } else if let plain = text.text {
                    n.append((role, .string(try r.string(plain, role: role))))
                }
            }
            let o = android
            for (key, source) in [
                ("channel_id", o.channelID), ("sound", o.sound), ("tag", o.tag), ("click_action", o.clickAction),
                ("icon", o.icon), ("image", o.image),
            ] {
                if let source { n.append((key, .string(try r.string(source, role: "android.\(key)")))) }
            }
            if let image { n.append(("image", .string(try r.imageURL(image)))) }  // the loader refuses it beside android.image
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
            for (role, prefix, text) in [("title", "title-", title), ("subtitle", "subtitle-", subtitle), ("body", "", body)] {
                guard let text else { continue }
                if let key = text.key {
                    alert.append(("\(prefix)loc-key", .string(key.iosKey)))
                    if !key.args.isEmpty { alert.append(("\(prefix)loc-args", try r.args(key.args, role: role))) }
                }
                // The text itself, or beside a key what iOS shows when the app lacks the key.
                if let plain = text.text { alert.append((role, .string(try r.string(plain, role: role)))) }
            }
            aps.append(("alert", .object(alert)))
            if let badge = apns.badge { aps.append(("badge", try r.integerValue(badge, role: "apns.badge"))) }
            for (key, source) in [("sound", apns.sound), ("category", apns.category), ("thread-id", apns.threadID)] {
                if let source { aps.append((key, .string(try r.string(source, role: "apns.\(key)")))) }
            }
            if let interruption { aps.append(("interruption-level", .string(interruption.rawValue))) }
            if let relevance { aps.append(("relevance-score", relevance == relevance.rounded() ? .int(Int64(relevance)) : .double(relevance))) }
            // An image reaches iOS through the app's notification service extension, which
            // runs only for a push with mutable-content (FCM's "Send an image in the
            // notification payload").
            if apns.mutableContent || image != nil { aps.append(("mutable-content", .int(1))) }
        }
        if let collapseID { headers.append(("apns-collapse-id", .string(collapseID))) }
        // Android's ttl does not reach APNs, whose default is 30 days: the same TTL as an
        // absolute expiry, so both platforms give up together (0: deliver now or never).
        if let ttl { headers.append(("apns-expiration", .string(r.expiration(ttl)))) }
        var config: [(key: String, value: JSONValue)] = [("headers", .object(headers)), ("payload", .object([("aps", .object(aps))]))]
        if !silent, let image { config.append(("fcm_options", .object([("image", .string(try r.imageURL(image)))]))) }
        return .object(config)
    }

    static func isColor(_ s: String) -> Bool {
        let b = Array(s.utf8)
        return b.count == 7 && b[0] == UInt8(ascii: "#")
            && b.dropFirst().allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46)
            }
    }
}
