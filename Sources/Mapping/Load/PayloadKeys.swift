/// The keys of the free JSON that the `fcm:` overlay checks: Apple's `aps` dictionary and the
/// Web Notification API's options. FCM passes both through unread (`ApnsConfig.payload` and
/// `WebpushConfig.notification` are google.protobuf.Struct), so a typo would reach the phone or
/// the browser, which ignores it.
enum PayloadKey: Equatable, Sendable {
    case string
    case strings
    /// An integer at least this.
    case integer(atLeast: Int64)
    /// The number 1 (`content-available`, `mutable-content`).
    case one
    /// A number from 0 to 1.
    case unit
    case number
    case bool
    case enumeration([String])
    /// A string, or a dictionary whose keys have a table of their own (`alert`, `sound`).
    case stringOrDictionary
    /// A dictionary of anything.
    case dictionary
    /// A number or a list of numbers (`vibrate`).
    case numbers
    /// A list of dictionaries (`actions`).
    case dictionaries
    case any

    /// Whether a literal `value` has this type.
    func admits(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.any, _), (.string, .string), (.bool, .bool), (.dictionary, .object), (.stringOrDictionary, .string),
            (.stringOrDictionary, .object), (.number, .int), (.number, .double), (.numbers, .int), (.numbers, .double):
            return true
        case (.strings, .array(let items)): return items.allSatisfy { if case .string = $0 { true } else { false } }
        case (.integer(let least), .int(let i)): return i >= least
        case (.one, .int(let i)): return i == 1
        case (.unit, .int(let i)): return i == 0 || i == 1
        case (.unit, .double(let d)): return d >= 0 && d <= 1
        case (.enumeration(let names), .string(let s)): return names.contains(s)
        case (.numbers, .array(let items)), (.dictionaries, .array(let items)):
            return items.allSatisfy {
                switch ($0, self) {
                case (.int, .numbers), (.double, .numbers), (.object, .dictionaries): true
                default: false
                }
            }
        default: return false
        }
    }

    /// How a value from the event is converted for this key: nil, sent as it is.
    var overlayType: OverlayType? {
        switch self {
        case .string: .string
        case .integer, .one: .int32
        case .unit, .number: .float
        case .bool: .bool
        case .enumeration(let names): .enumeration(names)
        case .strings, .stringOrDictionary, .dictionary, .numbers, .dictionaries, .any: nil
        }
    }

    var expected: String {
        switch self {
        case .string: "a string"
        case .strings: "a list of strings"
        case .integer(let least): "an integer of at least \(least)"
        case .one: "1"
        case .unit: "a number from 0 to 1"
        case .number: "a number"
        case .bool: "true or false"
        case .enumeration(let names): "one of " + names.joined(separator: ", ")
        case .stringOrDictionary: "a string or a dictionary"
        case .dictionary: "a dictionary"
        case .numbers: "a number or a list of numbers"
        case .dictionaries: "a list of dictionaries"
        case .any: "any value"
        }
    }

    /// Apple's `aps` keys: "Generating a remote notification" (developer.apple.com/documentation/
    /// usernotifications/generating-a-remote-notification, tables "aps dictionary keys", "alert
    /// dictionary keys" and "sound dictionary keys"); `input-push-channel` and `input-push-token`
    /// from "Starting and updating Live Activities with ActivityKit push notifications". Keyed by
    /// the dictionary's path in the message; an unknown key there is a load error.
    static let apple: [String: [String: PayloadKey]] = [
        "apns.payload.aps": [
            "alert": .stringOrDictionary, "badge": .integer(atLeast: 0), "sound": .stringOrDictionary, "thread-id": .string,
            "category": .string, "content-available": .one, "mutable-content": .one, "target-content-id": .string,
            "interruption-level": .enumeration(["passive", "active", "time-sensitive", "critical"]), "relevance-score": .unit,
            "filter-criteria": .string, "stale-date": .integer(atLeast: 0), "content-state": .dictionary, "timestamp": .integer(atLeast: 0),
            "event": .string, "dismissal-date": .integer(atLeast: 0), "attributes-type": .string, "attributes": .dictionary,
            "input-push-channel": .string, "input-push-token": .one,
        ],
        "apns.payload.aps.alert": [
            "title": .string, "subtitle": .string, "body": .string, "launch-image": .string, "title-loc-key": .string,
            "title-loc-args": .strings, "subtitle-loc-key": .string, "subtitle-loc-args": .strings, "loc-key": .string, "loc-args": .strings,
        ],
        "apns.payload.aps.sound": ["critical": .one, "name": .string, "volume": .unit],
    ]

    /// The Web Notification API's options (MDN, "Notification: Notification() constructor",
    /// developer.mozilla.org/en-US/docs/Web/API/Notification/Notification), which FCM's web SDK
    /// passes to `showNotification`. An unknown key is a warning: browsers add options.
    static let web: [String: [String: PayloadKey]] = [
        "webpush.notification": [
            "title": .string, "body": .string, "icon": .string, "image": .string, "badge": .string,
            "dir": .enumeration(["auto", "ltr", "rtl"]), "lang": .string, "tag": .string, "renotify": .bool,
            "requireInteraction": .bool, "silent": .bool, "timestamp": .number, "vibrate": .numbers, "actions": .dictionaries,
            "data": .any,
        ]
    ]
}
