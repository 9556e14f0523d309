import Foundation
import JSON

/// What a real phone or browser would ignore or mishandle in a message FCM accepts: FCM passes
/// these through (free JSON, string maps, or fields whose value it does not judge), so the
/// emulator accepts them too, and notes them beside the recorded message. A test that holds
/// pushbridge to "FCM accepts it and the device shows what we meant" asserts there are none.
///
/// Each rule names its source: Apple's payload key reference, the Firebase Android SDK's
/// `NotificationParams` and `Constants` (firebase/firebase-android-sdk at a089298e), RFC 8030.
public struct DeviceNote: Equatable, Sendable {
    /// The field, as a BadRequest would name it: `message.apns.payload.aps.badge`.
    public var field: String
    public var note: String

    var json: JSONValue { .object([("field", .string(field)), ("note", .string(note))]) }

    /// The notes for an accepted message (already valid against the schema), judged at
    /// `nowSeconds` (UNIX time; default: the clock's) where a time matters.
    static func notes(for message: JSONValue, nowSeconds: Int64? = nil) -> [DeviceNote] {
        var notes = Notes(nowSeconds: nowSeconds ?? Int64(Date().timeIntervalSince1970))
        for (key, value) in members(message) {
            switch MessageValidator.snake(key) {
            case "data": notes.androidData(value, "message.data")
            case "android": notes.android(value, "message.android", topLevelTitle: message["notification"].map(hasTitle) ?? (false, false))
            case "android_v2": notes.androidV2(value, "message.android_v2")
            case "apns": notes.apns(value, "message.apns")
            case "webpush": notes.webpushHeaders(value, "message.webpush")
            default: break
            }
        }
        return notes.list
    }

    static func members(_ value: JSONValue?) -> [(key: String, value: JSONValue)] {
        if case .object(let members)? = value { members } else { [] }
    }

    /// The member `name` (snake_case or lowerCamelCase), unless null.
    static func member(_ value: JSONValue?, _ name: String) -> JSONValue? {
        members(value).first { MessageValidator.snake($0.key) == name && $0.value != .null }?.value
    }

    /// A ProtoJSON number: a JSON number or a numeric string.
    static func number(_ value: JSONValue) -> Double? {
        switch value {
        case .int(let i): Double(i)
        case .double(let d): d
        case .string(let s): Double(s)
        default: nil
        }
    }

    /// Whether a notification object has a title, a body.
    static func hasTitle(_ notification: JSONValue) -> (title: Bool, body: Bool) {
        (member(notification, "title") != nil, member(notification, "body") != nil)
    }
}

struct Notes {
    var list: [DeviceNote] = []
    /// UNIX time, for the Live Activity `timestamp` rule.
    let nowSeconds: Int64

    mutating func add(_ field: String, _ note: String) { list.append(DeviceNote(field: field, note: note)) }

    /// The Android SDK hands an app `RemoteMessage.getData()` without these keys
    /// (`Constants.MessagePayloadKeys.extractDeveloperDefinedPayload`, Constants.java L120-132:
    /// not `google.`, not `gcm.`, not `from`, `message_type` or `collapse_key`); Play services
    /// strips `google.` keys case-insensitively (the comment at Constants.java L59-63).
    mutating func androidData(_ value: JSONValue, _ path: String) {
        for (key, _) in DeviceNote.members(value) {
            let lower = key.lowercased()
            if lower.hasPrefix("gcm.") || lower.hasPrefix("google.") || ["from", "message_type", "collapse_key"].contains(lower) {
                add("\(path).\(key)", "the Android SDK drops data key \"\(key)\" from RemoteMessage.getData(): the app never sees it")
            }
        }
    }

    mutating func android(_ value: JSONValue, _ path: String, topLevelTitle: (title: Bool, body: Bool)) {
        if let data = DeviceNote.member(value, "data") { androidData(data, "\(path).data") }
        guard let notification = DeviceNote.member(value, "notification") else { return }
        androidNotification(notification, "\(path).notification", inherited: topLevelTitle)
    }

    mutating func androidV2(_ value: JSONValue, _ path: String) {
        if let data = DeviceNote.member(value, "data") { androidData(data, "\(path).data") }
        let remote = DeviceNote.member(value, "remote_notification")
        guard let notification = DeviceNote.member(remote, "notification") else { return }
        androidNotification(notification, "\(path).remote_notification.notification", inherited: (false, false))
    }

    mutating func androidNotification(_ n: JSONValue, _ path: String, inherited: (title: Bool, body: Bool)) {
        // NotificationParams.getPossiblyLocalizedString (L377-384): a literal text wins and the
        // loc key is never looked up (firebase-android-sdk#3938); Message.notification.title
        // reaches Android too (firebase/flutterfire#9207).
        let own = DeviceNote.hasTitle(n)
        for (text, key, has) in [("title", "title_loc_key", own.title || inherited.title), ("body", "body_loc_key", own.body || inherited.body)]
        where has && DeviceNote.member(n, key) != nil {
            add("\(path).\(key)", "Android shows the literal \(text) and never looks \(key) up (firebase-android-sdk#3938)")
        }
        // NotificationParams.getNotificationCount: a negative count is logged and ignored.
        if let count = DeviceNote.member(n, "notification_count"), let c = DeviceNote.number(count), c < 0 {
            add("\(path).notification_count", "a negative notification_count is ignored by the Android SDK")
        }
        // NotificationParams.getVibrateTimings: "vibrateTimings have invalid length" for 0 or 1 entries.
        if case .array(let timings)? = DeviceNote.member(n, "vibrate_timings"), timings.count <= 1 {
            add("\(path).vibrate_timings", "the Android SDK ignores vibrate_timings with fewer than 2 entries")
        }
        // NotificationParams.getLightSettings: "Transparent color is invalid" (alpha 0).
        let color = DeviceNote.member(DeviceNote.member(n, "light_settings"), "color")
        if let alpha = DeviceNote.member(color, "alpha"), DeviceNote.number(alpha) == 0 {
            add("\(path).light_settings.color.alpha", "the Android SDK ignores a transparent light colour (\"Transparent color is invalid\")")
        }
    }

    mutating func apns(_ value: JSONValue, _ path: String) {
        for (name, _) in DeviceNote.members(DeviceNote.member(value, "headers")) where name.lowercased() == "apns-topic" {
            // FCM sends to the bundle ID the app registered with; another topic can only fail
            // delivery (APNs DeviceTokenNotForTopic).
            add("\(path).headers.\(name)", "FCM addresses the bundle ID the app registered with; apns-topic can only break delivery")
        }
        let aps = DeviceNote.member(DeviceNote.member(value, "payload"), "aps")
        let mutable = DeviceNote.member(aps, "mutable-content")
        if DeviceNote.member(DeviceNote.member(value, "fcm_options"), "image") != nil, mutable != .int(1) {
            // FCM, "Send an image in the notification payload" (iOS): the image is added by the
            // Notification Service Extension, which runs only with mutable-content 1.
            add("\(path).fcm_options.image", "iOS shows no image without aps.mutable-content: 1 (the Notification Service Extension never runs)")
        }
        let apsPath = "\(path).payload.aps"
        if let token = DeviceNote.member(value, "live_activity_token") {
            liveActivity(aps, apsPath, headers: DeviceNote.member(value, "headers"), token: token)
            return
        }
        for key in ["event", "content-state"] where DeviceNote.member(aps, key) != nil {
            // FCM's Live Activity guide: the token routes a push to the activity; without it
            // the keys reach the app as an ordinary notification's payload.
            add("\(apsPath).\(key)", "a Live Activity key without apns.live_activity_token: no activity sees it")
        }
        for (key, member) in DeviceNote.members(aps) {
            // Apple, "Generating a remote notification": each key's type.
            switch key {
            case "badge":
                if case .int(let n) = member, n >= 0 { continue }
                add("\(apsPath).badge", "iOS ignores a badge that is not a JSON integer >= 0 (phonegap-plugin-push#24: \"9\" is not shown)")
            case "content-available", "mutable-content":
                if member != .int(1) { add("\(apsPath).\(key)", "iOS acts on \(key) only when it is the number 1") }
            case "interruption-level":
                if case .string(let s) = member, ["passive", "active", "time-sensitive", "critical"].contains(s) { continue }
                add("\(apsPath).interruption-level", "iOS knows passive, active, time-sensitive and critical only (sideshow/apns2#185)")
            case "relevance-score":
                switch member {
                case .int(let n) where n == 0 || n == 1: continue
                case .double(let d) where d >= 0 && d <= 1: continue
                default: add("\(apsPath).relevance-score", "iOS reads relevance-score as a number from 0 to 1")
                }
            default: break
            }
        }
    }

    /// RFC 8030: TTL is delta-seconds (§5.2), Urgency one of four (§5.3), Topic at most 32
    /// characters of the URL- and filename-safe Base64 alphabet (§5.4).
    mutating func webpushHeaders(_ value: JSONValue, _ path: String) {
        for (name, header) in DeviceNote.members(DeviceNote.member(value, "headers")) {
            guard case .string(let text) = header else { continue }
            let field = "\(path).headers.\(name)"
            switch name.lowercased() {
            case "ttl" where text.isEmpty || !text.allSatisfy({ $0.isASCII && $0.isNumber }):
                add(field, "a push service takes TTL as delta-seconds (RFC 8030 §5.2)")
            case "urgency" where !["very-low", "low", "normal", "high"].contains(text):
                add(field, "Urgency is very-low, low, normal or high (RFC 8030 §5.3)")
            case "topic"
            where text.isEmpty || text.count > 32 || !text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }):
                add(field, "a Topic is at most 32 characters of the base64url alphabet (RFC 8030 §5.4)")
            default: break
            }
        }
    }
}
