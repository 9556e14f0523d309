import JSON

/// `apns.headers` and `apns.payload`: a string map and free JSON in the discovery document, with
/// the rules APNs (and so FCM) applies to them.
extension MessageValidator {
    mutating func apnsHeaders(_ value: JSONValue, _ path: String) {
        guard case .object(let headers) = value else { return }
        for (name, header) in headers {
            guard case .string(let text) = header else { continue }  // the string map reported it
            // APNs, "Sending notification requests to APNs": the headers' values.
            switch name.lowercased() {
            case "apns-priority" where !["5", "10", "1"].contains(text):
                violate("\(path).\(name)", "apns-priority must be 10, 5 or 1")
            case "apns-push-type"
            where !Self.apnsPushTypes.contains(text):
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
    mutating func apnsPayload(_ value: JSONValue, _ path: String) {
        guard case .object = value, let aps = value["aps"] else { return }  // not an object: the schema reported it
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
                    if isLiveActivity, ["title", "body"].contains(k), case .object = v { continue }
                    if k.hasSuffix("loc-args") {
                        locArgs(v, "\(field).\(k)")
                        let needed = k == "loc-args" ? "loc-key" : String(k.dropLast("args".count)) + "key"
                        if !keys.contains(needed) { violate("\(field).\(k)", "\(k) requires \(needed)") }
                    } else if k.hasSuffix("loc-key") || ["title", "subtitle", "body", "launch-image"].contains(k) {
                        string(v, "\(field).\(k)")
                    }
                }
            // No int32 rule for badge, content-available and mutable-content: ApnsConfig.payload is a
            // google.protobuf.Struct (free JSON), which keeps "3" a string, and FCM forwards it;
            // the device ignores it (phonegap-plugin-push#24). DeviceNote notes it instead.
            case "category", "thread-id", "target-content-id", "interruption-level": string(member, field)
            default: break
            }
        }
    }

    /// Apple, "Sending notification requests to APNs": `apns-push-type`'s values, `widgets`
    /// (WidgetKit push, iOS 26) and `controls` (ControlWidget push) included.
    static let apnsPushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets", "controls",
    ]

    /// `apns.live_activity_token`: a non-empty string (firebase-admin-node's
    /// `validateApnsLiveActivityToken`, "must be a non-empty string"), sent as a Live Activity
    /// (Apple, "Starting and updating Live Activities with ActivityKit push notifications": the
    /// push type `liveactivity`; APNs answers another push type InvalidPushType). What FCM itself
    /// answers for either is unpublished: the stricter rule, as for light settings.
    mutating func liveActivity(_ message: JSONValue) {
        let apns = DeviceNote.member(message, "apns")
        guard let token = DeviceNote.member(apns, "live_activity_token") else { return }
        if case .string(let text) = token, text.isEmpty {
            violate("message.apns.live_activity_token", "The Live Activity token is empty")
        }
        for (name, value) in DeviceNote.members(DeviceNote.member(apns, "headers")) where name.lowercased() == "apns-push-type" {
            if value != .string("liveactivity") {
                violate("message.apns.headers.\(name)", "a Live Activity push (live_activity_token) needs apns-push-type liveactivity")
            }
        }
    }

    private mutating func locArgs(_ value: JSONValue, _ path: String) {
        guard case .array(let items) = value else {
            violate(path, "Invalid value: expected an array of strings, found \(value.typeName)")
            return
        }
        for (i, item) in items.enumerated() {
            if case .string = item {} else { violate("\(path)[\(i)]", "Invalid value: loc args must be strings, found \(item.typeName)") }
        }
    }
}
