import Dates

// A Live Activity push as FCM takes it (docs/mapping.md, *Live Activities*): the device's FCM
// token as the target, Apple's token in `apns.live_activity_token`, ActivityKit's keys in `aps`
// (Apple, "Starting and updating Live Activities with ActivityKit push notifications"; FCM,
// "Get started with Live Activity").
extension EventMapping {
    /// The one message for `event`.
    ///
    /// - Parameters:
    ///   - eventTime: the event's time, in milliseconds since the Unix epoch: `timestamp`, and
    ///     what `{after: …}` dates count from.
    ///   - now: the time of sending, in seconds.
    ///   - devices: for `token: push_to_start`, the user's devices: one message to each that has
    ///     a push-to-start token for the attributes type.
    func renderActivity(
        _ event: DecodedEvent, eventTime: Int64, now: Int64, remainingTTL: Int?, devices: [UserDevice] = []
    ) throws(MappingFailure) -> [FCMMessage] {
        guard let activity else { throw .noTargets("not a Live Activity mapping") }
        let r = Resolver(event: event, now: now, remainingTTL: remainingTTL ?? maxAge?.seconds)
        switch (target, activity.token) {
        case (.device(let kind, let device), .value(let token)):
            let id = try r.target(device, kind: kind)
            return [try renderActivity(activity, event, r, eventTime: eventTime, now: now, to: MessageTarget(kind, id), token: token)]
        case (.user(let user, _), .pushToStart):
            let type = try activity.attributesType.map { (s) throws(MappingFailure) in try r.string(s, role: "activity.attributes_type") } ?? ""
            var messages: [FCMMessage] = []
            for device in devices {
                guard let token = device.pushToStart[type] else { continue }
                var message = try renderActivity(
                    activity, event, r, eventTime: eventTime, now: now, to: MessageTarget(device.kind, device.id), token: .literal(token))
                message.project = device.app
                message.liveActivity?.pushToStartType = type
                messages.append(message)
            }
            guard !messages.isEmpty else { throw .noDevices(user: try r.string(user, role: "target user")) }
            return messages
        case (.user(let key, _), .registry):
            var messages: [FCMMessage] = []
            for device in devices {
                guard let token = device.liveActivityToken else { continue }
                var message = try renderActivity(
                    activity, event, r, eventTime: eventTime, now: now, to: MessageTarget(device.kind, device.id), token: .literal(token))
                message.project = device.app
                message.liveActivity?.fromRegistry = true
                messages.append(message)
            }
            guard !messages.isEmpty else { throw .noDevices(user: LiveActivity.registryKey(try r.string(key, role: "activity.key"))) }
            return messages
        default: throw .noTargets("not a Live Activity target")
        }
    }

    private func renderActivity(
        _ activity: LiveActivity, _ event: DecodedEvent, _ r: Resolver, eventTime: Int64, now: Int64, to target: MessageTarget,
        token source: ValueSource
    ) throws(MappingFailure) -> FCMMessage {
        let kindOfEvent = try activity.resolveEvent(event)
        let timestamp = EventAge.seconds(eventTime)
        guard timestamp <= now + LiveActivity.futureLimitSeconds else {
            throw .invalidEventTime(
                field: activity.eventTime.name,
                reason:
                    "\(RFC3339.format(milliseconds: eventTime)) is over an hour ahead of now: the device would drop the update (is it milliseconds read as seconds?)"
            )
        }
        let key = try r.string(activity.key, role: "activity.key")
        guard !key.isEmpty else { throw .noTargets("the activity key from \(r.fieldName(activity.key)) is empty") }
        let token = try r.string(source, role: "activity.token")
        guard !token.isEmpty else { throw .noTargets("the Live Activity token from \(r.fieldName(source)) is empty") }

        var aps: Members = [("event", .string(kindOfEvent.rawValue)), ("timestamp", .int(timestamp))]
        if let state = activity.contentState { aps.append(("content-state", try state.render(event.data, role: "activity.content_state"))) }
        if let stale = activity.staleDate { aps.append(("stale-date", .int(try date(stale, "activity.stale_date", eventTime: timestamp, event)))) }
        if kindOfEvent == .end, let dismissal = activity.dismissalDate {
            aps.append(("dismissal-date", .int(try date(dismissal, "activity.dismissal_date", eventTime: timestamp, event))))
        }
        if let relevance = activity.relevance { aps.append(("relevance-score", Self.number(relevance))) }
        if let alert = activity.alert { aps.append(("alert", try activityAlert(alert, r))) }
        if kindOfEvent == .start {
            if let type = activity.attributesType { aps.append(("attributes-type", .string(try r.string(type, role: "activity.attributes_type")))) }
            if let attributes = activity.attributes { aps.append(("attributes", try attributes.render(event.data, role: "activity.attributes"))) }
            if activity.requestUpdateToken { aps.append(("input-push-token", .int(1))) }
        }
        // Priority 10 draws on the device's budget for activity updates; 5 does not, but may be
        // delayed (Apple, "Determine the update frequency").
        let high = activity.highPriority ?? (activity.alert != nil || kindOfEvent != .update)
        var headers: Members = [("apns-priority", .string(high ? "10" : "5")), ("apns-push-type", .string("liveactivity"))]
        if let ttl { headers.append(("apns-expiration", .string(r.expiration(ttl)))) }
        let apns: Members = [
            ("headers", .object(headers)), ("live_activity_token", .string(token)), ("payload", .object([("aps", .object(aps))])),
        ]
        var members: Members = [(target.kind.rawValue, .string(target.value)), ("apns", .object(apns))]
        if let analyticsLabel { members.append(("fcm_options", .object([("analytics_label", .string(analyticsLabel))]))) }
        var message = FCMMessage(json: .object(members), target: target)
        guard message.encoded.count <= FCMLimits.messageBytes else { throw .tooLarge(bytes: message.encoded.count, limit: FCMLimits.messageBytes) }
        message.liveActivity = LiveActivityInfo(key: key, event: kindOfEvent, token: token, timestamp: timestamp, alert: activity.alert != nil)
        message.liveActivity?.minIntervalSeconds = activity.minIntervalSeconds
        return message
    }

    /// `{title, body, sound}`: each text a string, or `{loc-key, loc-args}` with the iOS key.
    private func activityAlert(_ alert: LiveActivity.Alert, _ r: Resolver) throws(MappingFailure) -> JSONValue {
        var out: Members = []
        for (role, text) in [("title", alert.title), ("body", alert.body)] {
            guard let text else { continue }
            if let key = text.key {
                var loc: Members = [("loc-key", .string(key.iosKey))]
                if !key.args.isEmpty { loc.append(("loc-args", try r.args(key.args, role: "activity.alert.\(role)"))) }
                out.append((role, .object(loc)))
            } else if let plain = text.text {
                out.append((role, .string(try r.string(plain, role: "activity.alert.\(role)"))))
            }
        }
        if let sound = alert.sound { out.append(("sound", .string(try r.string(sound, role: "activity.alert.sound")))) }
        return .object(out)
    }

    /// UNIX seconds.
    private func date(_ source: LiveActivity.DateSource, _ role: String, eventTime: Int64, _ event: DecodedEvent) throws(MappingFailure) -> Int64 {
        switch source {
        case .after(let seconds): return eventTime + Int64(seconds)
        case .field(let pointer, let unit):
            return EventAge.seconds(try EventAge.fieldTime(in: event.data, at: pointer, unit: unit, role: role))
        }
    }
}

extension LiveActivity {
    /// The event this push is: fixed, or the field's value through `map`.
    func resolveEvent(_ event: DecodedEvent) throws(MappingFailure) -> Event {
        switch self.event {
        case .fixed(let e): return e
        case .field(let pointer, let map):
            let value = pointer.resolve(in: event.data) ?? .null
            if case .null = value { throw .missingField(field: pointer.description, role: "activity.event") }
            guard let text = Stringify.scalar(value) else {
                throw .wrongType(field: pointer.description, expected: "a string, number or boolean", found: value.typeName)
            }
            guard let chosen = map[text] else {
                throw .invalidValue(
                    field: pointer.description,
                    reason: "\"\(text.prefix(64))\" is not in activity.event.map (" + map.keys.sorted().joined(separator: ", ") + ")")
            }
            guard let e = chosen else { throw .activitySkipped(field: pointer.description, value: text) }
            return e
        }
    }
}
