/// One FCM HTTP v1 message, ready to send: the `message` object of
/// `POST /v1/projects/{project}/messages:send`.
public struct FCMMessage: Sendable, Equatable {
    /// The `message` object, serialized (compact, keys sorted): the bytes that are sent.
    public let encoded: [UInt8]
    /// Who it goes to: for invalidation records, and so that FCM's client can back off one
    /// throttled device or topic on its own.
    public let target: MessageTarget
    /// The project (a name of `fcm.projects`) of the device's app, for a message to one of a
    /// user's devices that names its app; nil: the event's project.
    public var project: String?
    /// For an event type with `pushes`: the push it belongs to, its project (nil: the default
    /// one) and the user of its `user` target, and the variant it took.
    public var push: PushInfo?
    /// For a Live Activity push: the activity, its event, Apple's token and the timestamp.
    public var liveActivity: LiveActivityInfo?

    public struct PushInfo: Sendable, Equatable {
        public var name: String
        public var project: String?
        public var user: String?
        public var variant: String?
    }

    public init(json: JSONValue, target: MessageTarget, project: String? = nil) {
        self.init(encoded: JSONWriter.write(json), target: target, project: project)
    }

    init(encoded: [UInt8], target: MessageTarget, project: String? = nil) {
        self.encoded = encoded
        self.target = target
        self.project = project
    }

    /// The device identifier (FID or registration token), for device-targeted messages.
    public var device: String? { target.isDevice ? target.value : nil }

    /// The `message` object as a value (parsed from ``encoded``; for inspection, not the hot path).
    public var json: JSONValue {
        (try? JSONParser.parse(encoded)) ?? .null
    }

    private static let bodyOpen = Array(#"{"message":"#.utf8)
    private static let bodyClose = Array("}".utf8)
    private static let bodyCloseValidateOnly = Array(#","validate_only":true}"#.utf8)

    /// The request body: `{"message": …}`, plus `"validate_only": true` for a dry run.
    public func requestBody(validateOnly: Bool = false, pretty: Bool = false) -> [UInt8] {
        if pretty {
            var members: [(key: String, value: JSONValue)] = [("message", json)]
            if validateOnly { members.append(("validate_only", .bool(true))) }
            return JSONWriter.write(.object(members), pretty: true)
        }
        let open = Self.bodyOpen
        let close = validateOnly ? Self.bodyCloseValidateOnly : Self.bodyClose
        return [UInt8](unsafeUninitializedCapacity: open.count + encoded.count + close.count) { buffer, count in
            for part in [open, encoded, close] {
                part.withUnsafeBufferPointer { p in
                    _ = UnsafeMutableBufferPointer(rebasing: buffer[count...]).initialize(fromContentsOf: p)
                    count += p.count
                }
            }
        }
    }
}

/// FCM's payload limits (architecture.md).
public enum FCMLimits {
    /// Bytes of a serialized message.
    public static let messageBytes = 4096
    /// Bytes of a serialized message to a topic or a condition.
    public static let topicMessageBytes = 2048
    /// Characters of a topic name (`[a-zA-Z0-9-_.~%]{1,900}`, the v1 discovery document).
    public static let topicNameLength = 900
    /// Topics one condition may name ("up to five topics", FCM's topic messaging guide).
    public static let conditionTopics = 5
    /// Longest TTL: 4 weeks.
    public static let maxTTLSeconds = 2_419_200
    /// APNs limits `apns-collapse-id` to 64 bytes.
    public static let apnsCollapseIDBytes = 64
}
