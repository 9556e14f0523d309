import JSON

/// Validates a `messages:send` request body as FCM HTTP v1 does, field by field, answering with
/// the field violations FCM would report.
///
/// The fields and their types are the discovery document's (``DiscoverySchema``, generated from
/// the pinned `fcm.v1.json`): an unknown field is refused at any depth, and each value is read by
/// Google's ProtoJSON rules for its type (MessageValidator+Schema.swift). On top of the types,
/// the rules the v1 reference and the document state in words: exactly one target of `fid`,
/// `token`, `topic` and `condition`; loc args need their key; `ttl` up to 4 weeks; `color` is
/// `#rrggbb`; reserved data keys are refused; topic names match `[a-zA-Z0-9-_.~%]{1,900}`; a
/// condition is `'a' in topics` joined by `&&`, `||`, `!` and parentheses, with at most 5 topics;
/// the message is at most 4096 bytes (2048 to a topic or a condition).
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

    private(set) var violations: [Violation] = []
    /// The message passed every field check but is over its size limit (FCM answers that
    /// without naming a field).
    private(set) var tooBig = false
    /// The message carries `apns.live_activity_token`: its alert's title and body may be
    /// `{loc-key, loc-args}` objects (TS1, A9), which DeviceNote judges.
    var isLiveActivity = false

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
        isLiveActivity = DeviceNote.member(DeviceNote.member(message, "apns"), "live_activity_token") != nil
        self.message(message, type: "Message", path: "message")
        var accepted = Accepted(message: message, validateOnly: validateOnly)
        for (key, value) in fields {
            guard case .string(let s) = value else { continue }  // a wrong type is reported above
            switch Self.snake(key) {
            case "fid": accepted.fid = s
            case "token": accepted.token = s
            case "topic": accepted.topic = s
            case "condition": accepted.condition = s
            default: break
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
        liveActivity(message)
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

    mutating func unknown(_ path: String, _ key: String) {
        violate(
            path.isEmpty ? key : "\(path).\(key)",
            "Invalid JSON payload received. Unknown name \"\(key)\"\(path.isEmpty ? "" : " at '\(path)'"): Cannot find field.")
    }

    mutating func violate(_ field: String, _ description: String) {
        violations.append(Violation(field: field, description: description))
    }
}
