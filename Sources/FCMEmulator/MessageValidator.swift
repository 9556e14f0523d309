import JSON

/// Validates a `messages:send` request body as FCM HTTP v1 does, field by field, answering with
/// the field violations FCM would report.
///
/// Field names are accepted in snake_case and lowerCamelCase, as the API's JSON mapping does.
/// Rules (from the v1 reference and the discovery document): exactly one target of `fid`,
/// `token`, `topic` and `condition`; strings where strings belong; loc args are arrays of
/// strings and need their key; `ttl` is `"<seconds>[.fraction]s"` up to 4 weeks; enums; `color`
/// is `#rrggbb`; data values are strings and reserved data keys are refused; topic names match
/// `[a-zA-Z0-9-_.~%]{1,900}`; a condition is `'a' in topics` joined by `&&`, `||`, `!` and
/// parentheses, with at most 5 topics; the message is at most 4096 bytes (2048 to a topic or a
/// condition); unknown fields are refused.
///
/// Google's proto3 JSON rules apply as FCM's parser applies them (protobuf.dev, "ProtoJSON
/// Format"): `null` leaves a field unset (but is refused inside a list), and integer fields
/// take numbers or decimal strings (`"notification_count": "3"`).
struct MessageValidator {
    struct Violation: Equatable, Sendable {
        var field: String
        var description: String
    }

    struct Accepted: Sendable {
        var message: JSONValue
        var validateOnly: Bool
        var fid: String?
        var token: String?
        var topic: String?
        var condition: String?

        /// The device identifier, for a message to one device.
        var device: String? { fid ?? token }
    }

    /// FCM's limits.
    static let maxMessageBytes = 4096
    static let maxTopicMessageBytes = 2048
    static let maxTTLSeconds = 2_419_200.0
    static let maxTopicNameLength = 900
    static let maxConditionTopics = 5
    /// The v1 `Message` fields (discovery document), `androidV2` left out: pushbridge never sends it.
    static let messageFields: Set<String> = [
        "name", "fid", "token", "topic", "condition", "data", "notification", "android", "apns", "webpush", "fcm_options",
    ]

    private(set) var violations: [Violation] = []
    /// The message passed every field check but is over its size limit (FCM answers that
    /// without naming a field).
    private(set) var tooBig = false

    /// The accepted message, or nil with ``violations`` set.
    mutating func validate(body: [UInt8]) -> Accepted? {
        let root: JSONValue
        do {
            root = try JSONParser.parse(body)
        } catch {
            violate("", "Invalid JSON payload received. \(error)")
            return nil
        }
        guard case .object(let top) = root else {
            violate("", "Invalid JSON payload received. Expected an object.")
            return nil
        }
        var message: JSONValue?
        var validateOnly = false
        for (key, value) in top {
            switch Self.snake(key) {
            case "message": message = value
            case "validate_only":
                guard case .bool(let b) = value else {
                    violate("validate_only", "Invalid value: expected a boolean")
                    continue
                }
                validateOnly = b
            default: unknown("", key)
            }
        }
        guard let message, case .object(let fields) = message else {
            violate("message", "Required: the request has no message object")
            return nil
        }
        var accepted = Accepted(message: message, validateOnly: validateOnly)
        for (key, value) in fields {
            let path = "message.\(Self.snake(key))"
            // proto3 JSON: null leaves a field unset, but an unknown name is still refused.
            if value == .null, Self.messageFields.contains(Self.snake(key)) { continue }
            switch Self.snake(key) {
            case "name": string(value, path)
            case "fid": accepted.fid = string(value, path)
            case "token": accepted.token = string(value, path)
            case "topic": accepted.topic = string(value, path)
            case "condition": accepted.condition = string(value, path)
            case "data": stringMap(value, path, reservedKeys: true)
            case "notification": object(value, path, fields: ["title": .string, "body": .string, "image": .string])
            case "android": android(value, path)
            case "apns": apns(value, path)
            case "webpush": webpush(value, path)
            case "fcm_options": object(value, path, fields: ["analytics_label": .analyticsLabel])
            default: unknown("message", key)
            }
        }
        let targets = [accepted.fid, accepted.token, accepted.topic, accepted.condition].compactMap { $0 }
        if targets.count != 1 {
            violate("message", "Exactly one of fid, token, topic or condition must be specified; found \(targets.count)")
        }
        if let fid = accepted.fid, fid.isEmpty { violate("message.fid", "The Firebase Installation ID is empty") }
        if let token = accepted.token, token.isEmpty { violate("message.token", "The registration token is empty") }
        if var topic = accepted.topic {
            if topic.hasPrefix("/topics/") { topic.removeFirst(8) }
            if let problem = Self.topicNameProblem(topic) { violate("message.topic", problem) }
        }
        if let condition = accepted.condition, let problem = ConditionSyntax.problem(condition) {
            violate("message.condition", "Invalid condition: \(problem)")
        }
        guard violations.isEmpty else { return nil }
        let size = JSONWriter.write(message).count
        let limit = accepted.topic != nil || accepted.condition != nil ? Self.maxTopicMessageBytes : Self.maxMessageBytes
        if size > limit {
            tooBig = true
            return nil
        }
        return accepted
    }

    /// Why `name` is not a topic name: `[a-zA-Z0-9-_.~%]{1,900}`.
    static func topicNameProblem(_ name: String) -> String? {
        if name.isEmpty || name.utf8.count > maxTopicNameLength || !name.utf8.allSatisfy(isTopicByte) {
            return "Topic name must match [a-zA-Z0-9-_.~%]{1,900}"
        }
        return nil
    }

    // MARK: Objects of the v1 API

    enum Kind {
        case string, bool, int, stringArray, stringMap, color, ttl, analyticsLabel, free
        case oneOf(Set<String>)
    }

    private mutating func android(_ value: JSONValue, _ path: String) {
        object(
            value, path,
            fields: [
                "collapse_key": .string, "priority": .oneOf(["NORMAL", "HIGH"]), "ttl": .ttl, "restricted_package_name": .string,
                "data": .stringMap, "direct_boot_ok": .bool, "bandwidth_constrained_ok": .bool, "restricted_satellite_ok": .bool,
                "fcm_options": .free, "notification": .free,
            ])
        if case .object(let fields) = value {
            for (key, member) in fields where member != .null {
                switch Self.snake(key) {
                case "notification": androidNotification(member, "\(path).notification")
                case "fcm_options": object(member, "\(path).fcm_options", fields: ["analytics_label": .analyticsLabel])
                default: break
                }
            }
        }
    }

    private mutating func androidNotification(_ value: JSONValue, _ path: String) {
        object(
            value, path,
            fields: [
                "title": .string, "body": .string, "icon": .string, "color": .color, "sound": .string, "tag": .string,
                "click_action": .string, "body_loc_key": .string, "body_loc_args": .stringArray, "title_loc_key": .string,
                "title_loc_args": .stringArray, "channel_id": .string, "ticker": .string, "sticky": .bool, "event_time": .string,
                "local_only": .bool,
                "notification_priority": .oneOf([
                    "PRIORITY_UNSPECIFIED", "PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH", "PRIORITY_MAX",
                ]),
                "default_sound": .bool, "default_vibrate_timings": .bool, "default_light_settings": .bool, "vibrate_timings": .free,
                "visibility": .oneOf(["VISIBILITY_UNSPECIFIED", "PRIVATE", "PUBLIC", "SECRET"]), "notification_count": .int,
                "light_settings": .free, "image": .string, "bypass_proxy_notification": .bool,
                "proxy": .oneOf(["PROXY_UNSPECIFIED", "ALLOW", "DENY", "IF_PRIORITY_LOWERED"]),
            ])
        guard case .object(let fields) = value else { return }
        let keys = Set(fields.map { Self.snake($0.key) })
        for (args, key) in [("body_loc_args", "body_loc_key"), ("title_loc_args", "title_loc_key")] where keys.contains(args) && !keys.contains(key) {
            violate("\(path).\(args)", "\(args) requires \(key)")
        }
    }

    private mutating func apns(_ value: JSONValue, _ path: String) {
        object(value, path, fields: ["headers": .stringMap, "payload": .free, "fcm_options": .free, "live_activity_token": .string])
        guard case .object(let fields) = value else { return }
        for (key, member) in fields where member != .null {
            switch Self.snake(key) {
            case "headers": apnsHeaders(member, "\(path).headers")
            case "payload": apnsPayload(member, "\(path).payload")
            case "fcm_options": object(member, "\(path).fcm_options", fields: ["analytics_label": .analyticsLabel, "image": .string])
            default: break
            }
        }
    }

    private mutating func apnsHeaders(_ value: JSONValue, _ path: String) {
        guard case .object(let headers) = value else { return }
        for (name, header) in headers {
            guard case .string(let text) = header else { continue }  // stringMap reported it
            switch name.lowercased() {
            case "apns-priority" where !["5", "10", "1"].contains(text):
                violate("\(path).\(name)", "apns-priority must be 10, 5 or 1")
            case "apns-push-type"
            where !["alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk"].contains(text):
                violate("\(path).\(name)", "unknown apns-push-type \"\(text)\"")
            case "apns-expiration" where Int64(text) == nil:
                violate("\(path).\(name)", "apns-expiration must be a UNIX time in seconds")
            case "apns-collapse-id" where text.utf8.count > 64:
                violate("\(path).\(name)", "apns-collapse-id must be at most 64 bytes")
            default: break
            }
        }
    }

    /// The APNs payload is free-form JSON, but `aps` has a schema that APNs (and so FCM) enforces.
    private mutating func apnsPayload(_ value: JSONValue, _ path: String) {
        guard case .object = value else {
            violate(path, "Invalid value: expected an object")
            return
        }
        guard let aps = value["aps"] else { return }
        guard case .object(let apsFields) = aps else {
            violate("\(path).aps", "Invalid value: expected an object")
            return
        }
        for (key, member) in apsFields {
            let field = "\(path).aps.\(key)"
            switch key {
            case "alert":
                if case .string = member { continue }
                guard case .object(let alert) = member else {
                    violate(field, "alert must be a string or an object")
                    continue
                }
                let keys = Set(alert.map(\.key))
                for (k, v) in alert {
                    if k.hasSuffix("loc-args") {
                        check(v, "\(field).\(k)", .stringArray)
                        let needed = k == "loc-args" ? "loc-key" : String(k.dropLast("args".count)) + "key"
                        if !keys.contains(needed) { violate("\(field).\(k)", "\(k) requires \(needed)") }
                    } else if k.hasSuffix("loc-key") || ["title", "subtitle", "body", "launch-image"].contains(k) {
                        check(v, "\(field).\(k)", .string)
                    }
                }
            case "badge", "content-available", "mutable-content": check(member, field, .int)
            case "category", "thread-id", "target-content-id", "interruption-level": check(member, field, .string)
            default: break
            }
        }
    }

    private mutating func webpush(_ value: JSONValue, _ path: String) {
        object(value, path, fields: ["headers": .stringMap, "data": .stringMap, "notification": .free, "fcm_options": .free])
    }

    // MARK: Checks

    private mutating func object(_ value: JSONValue, _ path: String, fields: [String: Kind]) {
        guard case .object(let members) = value else {
            violate(path, "Invalid value: expected an object")
            return
        }
        for (key, member) in members {
            let name = Self.snake(key)
            guard let kind = fields[name] else {
                unknown(path, key)
                continue
            }
            if member == .null { continue }  // proto3 JSON: null leaves the field unset
            check(member, "\(path).\(name)", kind)
        }
    }

    private mutating func check(_ value: JSONValue, _ path: String, _ kind: Kind) {
        switch kind {
        case .free: break
        case .string: string(value, path)
        case .bool: if case .bool = value {} else { violate(path, "Invalid value: expected a boolean, found \(value.typeName)") }
        case .int:
            if !Self.isInt32(value) {
                violate(path, "Invalid value at '\(path)' (TYPE_INT32), \(String(decoding: JSONWriter.write(value), as: UTF8.self))")
            }
        case .stringArray:
            guard case .array(let items) = value else {
                violate(path, "Invalid value: expected an array of strings, found \(value.typeName)")
                return
            }
            for (i, item) in items.enumerated() {
                // Null is refused inside lists too (proto3 JSON).
                if case .string = item {} else { violate("\(path)[\(i)]", "Invalid value: loc args must be strings, found \(item.typeName)") }
            }
        case .stringMap: stringMap(value, path, reservedKeys: false)
        case .color:
            if let s = string(value, path), !Self.isColor(s) { violate(path, "Invalid color \"\(s)\": expected #rrggbb") }
        case .ttl:
            if let s = string(value, path) {
                if let seconds = Self.durationSeconds(s) {
                    if seconds > Self.maxTTLSeconds { violate(path, "TTL \(s) is longer than 4 weeks (2419200s)") }
                } else {
                    violate(path, "Invalid duration \"\(s)\": expected seconds with an \"s\" suffix, e.g. \"3600s\"")
                }
            }
        case .analyticsLabel:
            if let s = string(value, path), s.isEmpty || s.utf8.count > 50 || !s.utf8.allSatisfy(Self.isTopicByte) {
                violate(path, "analytics_label must match ^[a-zA-Z0-9-_.~%]{1,50}$")
            }
        case .oneOf(let allowed):
            if let s = string(value, path), !allowed.contains(s) {
                violate(path, "Invalid value \"\(s)\": expected one of \(allowed.sorted().joined(separator: ", "))")
            }
        }
    }

    @discardableResult
    private mutating func string(_ value: JSONValue, _ path: String) -> String? {
        guard case .string(let s) = value else {
            violate(path, "Invalid value: expected a string, found \(value.typeName)")
            return nil
        }
        return s
    }

    private mutating func stringMap(_ value: JSONValue, _ path: String, reservedKeys: Bool) {
        guard case .object(let members) = value else {
            violate(path, "Invalid value: expected a map of strings")
            return
        }
        for (key, member) in members {
            if case .string = member {} else { violate("\(path).\(key)", "Invalid value: map values must be strings, found \(member.typeName)") }
            if reservedKeys, Self.isReservedDataKey(key) {
                violate(
                    "\(path).\(key)",
                    "Invalid data key \"\(key)\": \"from\", \"message_type\" and keys starting with \"google\" or \"gcm\" are reserved")
            }
        }
    }

    private mutating func unknown(_ path: String, _ key: String) {
        violate(
            path.isEmpty ? key : "\(path).\(key)",
            "Invalid JSON payload received. Unknown name \"\(key)\"\(path.isEmpty ? "" : " at '\(path)'"): Cannot find field.")
    }

    private mutating func violate(_ field: String, _ description: String) {
        violations.append(Violation(field: field, description: description))
    }
}
