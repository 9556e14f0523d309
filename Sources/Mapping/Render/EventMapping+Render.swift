import Dates

extension EventMapping {
    /// The messages for `event`: one, or one per device for a device list.
    ///
    /// Does not apply `max_age`: ``MappingSet/render(_:now:maxAge:)`` does, from the record.
    ///
    /// - Parameters:
    ///   - now: the time of sending, in seconds since the Unix epoch (nil: the clock's, read
    ///     only when needed): a TTL also sets `apns-expiration`, which APNs reads as an absolute
    ///     time.
    ///   - clock: read for `now` when it is nil.
    ///   - remainingTTL: for `ttl: remaining`, the seconds left of `max_age` (``EventAge``);
    ///     nil: all of it.
    ///   - devices: for a `user` target, the user's devices that pass its filter (non-empty).
    public func render(
        _ event: DecodedEvent, now: Int64? = nil, clock: any WallClock = SystemWallClock(), remainingTTL: Int? = nil,
        devices: [UserDevice] = []
    ) -> Result<[FCMMessage], MappingFailure> {
        let remaining = remainingTTL ?? maxAge?.seconds
        if activity != nil { return render(event, recordTimestamp: nil, now: now, clock: clock, remainingTTL: remaining, devices: devices) }
        do {
            if let template, let messages = try? template.render(event, now: now, remainingTTL: remaining, clock: clock, devices: devices) {
                return .success(messages)
            }
            // Without a template, or to name the failure as the tree path does.
            return .success(try renderTree(event, now: now, clock: clock, remainingTTL: remaining, devices: devices))
        } catch {
            return .failure(error)
        }
    }

    /// A Live Activity mapping's one message; `recordTimestamp` is the event's time unless
    /// `occurred_at` names a field.
    func render(
        _ event: DecodedEvent, recordTimestamp: Int64?, now: Int64?, clock: any WallClock, remainingTTL: Int?, devices: [UserDevice]
    ) -> Result<[FCMMessage], MappingFailure> {
        guard let activity else { return .failure(.noTargets("not a Live Activity mapping")) }
        do throws(MappingFailure) {
            let time = try EventAge.eventTime(event, recordTimestamp: recordTimestamp, from: activity.eventTime)
            return .success(
                try renderActivity(event, eventTime: time, now: now ?? clock.nowMilliseconds() / 1000, remainingTTL: remainingTTL, devices: devices))
        } catch {
            return .failure(error)
        }
    }

    /// Renders by building the message as a ``JSONValue`` tree. The reference path: templates
    /// are made from it, and mappings without a template use it.
    func renderTree(
        _ event: DecodedEvent, now: Int64? = nil, clock: any WallClock = SystemWallClock(), remainingTTL: Int? = nil,
        devices: [UserDevice] = []
    ) throws(MappingFailure) -> [FCMMessage] {
        let r = Resolver(event: event, now: now, remainingTTL: remainingTTL ?? maxAge?.seconds, clock: clock)
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
        // A Live Activity whose tokens are in the registry: the activity's entry.
        return activity?.token == .registry ? LiveActivity.registryKey(user) : user
    }

    /// Compiles the byte template: the message rendered once with a hole for every value that
    /// comes from the event or the clock. Nil if the mapping cannot be rendered without an event
    /// (e.g. an invalid literal); `render` then uses the tree path, which reports the problem
    /// per event.
    func compileTemplate() -> MessageTemplate? {
        guard activity == nil else { return nil }  // rendered by renderActivity alone
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
            case .user: return MessageTemplate(user: target, shared: shared, holes: recorder.holes)  // each device's kind its own place
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
        // The shared collapse key or replace ID becomes apns-collapse-id unless apns.collapse_id is given.
        let sharedToAPNs = ios && apns.collapseID == nil
        let collapse = try collapseKey.map { (s) throws(MappingFailure) in try r.collapseID(s, role: "collapse_key", forAPNs: sharedToAPNs) }
        // With a collapse key, the group's apns-collapse-id already replaces duplicates on iOS.
        let replace = try replaceID.map { (s) throws(MappingFailure) in
            try r.collapseID(s, role: "replace_id", forAPNs: sharedToAPNs && collapse == nil)
        }
        if platforms.contains(.android), case .object(let a) = try androidConfig(r, collapse: collapse, replace: replace), !a.isEmpty {
            members.append(("android", .object(a)))  // a silent push may have no Android options at all
        }
        if ios {
            let own = try apns.collapseID.map { (s) throws(MappingFailure) in try r.collapseID(s, role: "apns.collapse_id", forAPNs: true) }
            members.append(("apns", try apnsConfig(r, collapseID: own ?? collapse ?? replace)))
        }
        if platforms.contains(.web), case .object(let w) = try webpushConfig(r, replace: replace), !w.isEmpty {
            members.append(("webpush", .object(w)))
        }
        if !data.isEmpty { members.append(("data", try dataObject(r, extra: []))) }
        if let analyticsLabel { members.append(("fcm_options", .object([("analytics_label", .string(analyticsLabel))]))) }
        try mergeOverlay(into: &members, r)
        return members
    }

    static func isColor(_ s: String) -> Bool {
        let b = Array(s.utf8)
        return b.count == 7 && b[0] == UInt8(ascii: "#")
            && b.dropFirst().allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46)
            }
    }
}
