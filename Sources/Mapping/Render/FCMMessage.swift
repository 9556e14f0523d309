/// One FCM HTTP v1 message, ready to send: the `message` object of
/// `POST /v1/projects/{project}/messages:send`.
public struct FCMMessage: Sendable, Equatable {
    /// The `message` object, serialized (compact, keys sorted): the bytes that are sent.
    public let encoded: [UInt8]
    /// The registration token, for token-targeted messages (for token-invalidation records).
    public let token: String?

    public init(json: JSONValue, token: String?) {
        self.init(encoded: JSONWriter.write(json), token: token)
    }

    init(encoded: [UInt8], token: String?) {
        self.encoded = encoded
        self.token = token
    }

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
        let open = Self.bodyOpen, close = validateOnly ? Self.bodyCloseValidateOnly : Self.bodyClose
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
    /// Bytes of a serialized topic message.
    public static let topicMessageBytes = 2048
    /// Longest TTL: 4 weeks.
    public static let maxTTLSeconds = 2_419_200
    /// APNs limits `apns-collapse-id` to 64 bytes.
    public static let apnsCollapseIDBytes = 64
}
