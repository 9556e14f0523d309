/// A mapping's `activity:` block: the event starts, updates or ends an iOS Live Activity
/// (docs/mapping.md, *Live Activities*). FCM carries it as an APNs message to the device's FCM
/// token with Apple's activity token in `apns.live_activity_token` and ActivityKit's keys in
/// `aps` (FCM's "Get started with Live Activity"; Apple's "Starting and updating Live
/// Activities with ActivityKit push notifications").
public struct LiveActivity: Sendable {
    /// `aps.event`.
    public enum Event: String, Sendable, CaseIterable {
        case start, update, end
    }

    /// Which event a push is: fixed, or from a field's value through `map` (a value mapped to
    /// nil skips the event).
    public enum EventChoice: Sendable, Equatable {
        case fixed(Event)
        case field(JSONPointer, map: [String: Event?])

        /// Every event this choice can give, for the loader's checks.
        var possible: Set<Event> {
            switch self {
            case .fixed(let e): [e]
            case .field(_, let map): Set(map.values.compactMap { $0 })
            }
        }
    }

    /// Where Apple's token comes from.
    public enum TokenSource: Sendable, Equatable {
        /// A value, usually an event field.
        case value(ValueSource)
        /// A start to a `user` target: each of the user's devices' push-to-start token for the
        /// activity's attributes type, from the device registry.
        case pushToStart
        /// The device registry's entry for the activity (key `activity:` and the activity's
        /// key): each device following it, with its token for it.
        case registry
    }

    /// The device registry key of an activity's entry.
    public static func registryKey(_ key: String) -> String { "activity:" + key }

    /// A date the device reads as UNIX seconds (`stale-date`, `dismissal-date`).
    public enum DateSource: Sendable, Equatable {
        /// An event field: RFC 3339 text, or epoch milliseconds (`unit: s`: seconds).
        case field(JSONPointer, unit: MaxAge.EpochUnit)
        /// This many seconds after the event's time.
        case after(seconds: Int)
    }

    /// `alert`: lights the screen and shows the expanded activity. Texts in the Live Activity
    /// form: a string, or `{loc-key, loc-args}` (the key on iOS).
    public struct Alert: Sendable, Equatable {
        public var title: NotificationText?
        public var body: NotificationText?
        public var sound: ValueSource?
    }

    /// The activity's ID (an order ID): what its updates are ordered by.
    public var key: ValueSource
    public var event: EventChoice
    /// Apple's token: the activity's push token (update, end), or the app's push-to-start token
    /// (start). `apns.live_activity_token`.
    public var token: TokenSource
    /// `content-state`: JSON the app's `ContentState` decodes, with values typed.
    var contentState: JSONTemplate?
    /// `attributes-type` and `attributes`: push-to-start only.
    public var attributesType: ValueSource?
    var attributes: JSONTemplate?
    /// `input-push-token: 1` on a start: the started activity gets a push token of its own.
    public var requestUpdateToken = true
    public var staleDate: DateSource?
    /// `end` only.
    public var dismissalDate: DateSource?
    public var alert: Alert?
    /// `apns-priority` 10 (true) or 5; nil: 10 with an alert or on start and end, else 5.
    public var highPriority: Bool?
    /// `relevance-score`: orders the app's activities (any number ≥ 0).
    public var relevance: Double?
    /// After a push of the activity is answered, the next waits this long (newer updates
    /// replacing older ones meanwhile): at most one push per interval (`min_interval`).
    public var minIntervalSeconds: Int?
    /// Where `timestamp` comes from: the event's time (`occurred_at`, else the Kafka timestamp).
    public var eventTime: MaxAge.EventTime = .recordTimestamp

    /// An event time this far ahead of the time of sending is a producer's mistake (a time in
    /// milliseconds read as seconds): the device would drop the update (forum 776165,
    /// observed, says 8 hours); one hour leaves room for clock skew.
    public static let futureLimitSeconds: Int64 = 3600
}

/// What a rendered Live Activity push is, for ordering and for invalidation records.
public struct LiveActivityInfo: Sendable, Equatable {
    /// The activity's ID (the mapping's `activity.key`).
    public var key: String
    public var event: LiveActivity.Event
    /// Apple's token sent in `apns.live_activity_token`.
    public var token: String
    /// `aps.timestamp`.
    public var timestamp: Int64
    /// The token is the device's push-to-start token for this attributes type (from the
    /// registry), not an activity's.
    public var pushToStartType: String?
    /// The token came from the activity's registry entry: a dead one leaves it.
    public var fromRegistry = false
    /// The mapping's `min_interval`, in seconds.
    public var minIntervalSeconds: Int?
    /// It carries an alert: shown, so never replaced by a newer update before it is sent.
    public var alert: Bool

    public init(key: String, event: LiveActivity.Event, token: String, timestamp: Int64, alert: Bool = false, pushToStartType: String? = nil) {
        self.key = key
        self.event = event
        self.token = token
        self.timestamp = timestamp
        self.alert = alert
        self.pushToStartType = pushToStartType
    }
}
