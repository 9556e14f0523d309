// What a mapping sets for one platform only (docs/mapping.md, *Per-platform options*). A value
// given here replaces the shared one on that platform: `android.priority` beside `priority`
// changes Android's alone.
extension EventMapping {
    public struct AndroidOptions: Sendable {
        public var channelID: ValueSource?
        public var sound: ValueSource?
        public var tag: ValueSource?
        public var clickAction: ValueSource?
        public var icon: ValueSource?
        public var color: ValueSource?
        public var image: ValueSource?
        public var title: NotificationText?
        public var body: NotificationText?
        /// `android.priority`; nil: the shared `priority`.
        public var highPriority: Bool?
        public var ttl: TTL?
        public var collapseKey: ValueSource?
        /// `notification_count`; nil: the shared `badge`.
        public var notificationCount: ValueSource?
        /// `notification.visibility`: `PRIVATE`, `PUBLIC` or `SECRET`.
        public var visibility: String?
        /// `notification.event_time`: the time the notification shows, from an event field.
        public var eventTime: (pointer: JSONPointer, unit: MaxAge.EpochUnit)?
        public var sticky: Bool?
        public var localOnly: Bool?
        public var directBootOK: Bool?
        public var ticker: ValueSource?
        /// `notification.notification_priority`: `PRIORITY_MIN` … `PRIORITY_MAX`.
        public var notificationPriority: String?
        public var restrictedPackageName: String?
        /// Added to the shared `data` for Android (FCM's `android.data` replaces `data`, so both
        /// are sent there).
        public var data: [(key: String, value: ValueSource)] = []
        public var analyticsLabel: String?
    }

    public struct APNSOptions: Sendable {
        /// Must resolve to an integer of at least 0; nil: the shared `badge`.
        public var badge: ValueSource?
        public var sound: ValueSource?
        /// A critical alert's sound (`{critical: 1, name, volume}`), instead of `sound`.
        public var criticalSound: CriticalSound?
        public var category: ValueSource?
        public var threadID: ValueSource?
        public var mutableContent = false
        public var title: NotificationText?
        public var subtitle: NotificationText?
        public var body: NotificationText?
        /// `apns-priority`: 10, 5 or 1; nil: the shared `priority`.
        public var priority: String?
        public var ttl: TTL?
        /// `apns-collapse-id`; nil: the shared `collapse_key`, else `replace_id`.
        public var collapseID: ValueSource?
        public var targetContentID: ValueSource?
        public var filterCriteria: ValueSource?
        /// `fcm_options.image` (with `mutable-content: 1`); nil: the shared `image`.
        public var image: ValueSource?
        public var analyticsLabel: String?
    }

    /// Apple's sound dictionary for a critical alert.
    public struct CriticalSound: Sendable, Equatable {
        public var name: ValueSource
        /// 0 to 1; nil: the system's.
        public var volume: Double?
    }

    /// Web push (`webpush`): the Notifications API's options, RFC 8030's headers, and the page
    /// a click opens. Web has no localization keys.
    public struct WebOptions: Sendable {
        /// Plain text only; nil: the shared `title`'s text or fallback.
        public var title: NotificationText?
        public var body: NotificationText?
        /// https URLs.
        public var image: ValueSource?
        public var icon: ValueSource?
        public var badge: ValueSource?
        /// `fcm_options.link`, an https URL the click opens.
        public var link: ValueSource?
        /// `notification.tag`; nil: `replace_id`.
        public var tag: ValueSource?
        public var requireInteraction: Bool?
        public var renotify: Bool?
        public var silent: Bool?
        public var lang: ValueSource?
        /// `auto`, `ltr` or `rtl`.
        public var dir: String?
        /// The `Urgency` header (RFC 8030 §5.3); nil: from the shared `priority`.
        public var urgency: String?
        /// The `TTL` header (RFC 8030 §5.2); nil: the shared `ttl`.
        public var ttl: TTL?
        /// The `Topic` header (RFC 8030 §5.4): a newer push with the same topic replaces one
        /// still waiting in the push service.
        public var topic: ValueSource?
        public var data: [(key: String, value: ValueSource)] = []
        public var analyticsLabel: String?

        /// RFC 8030 §5.3's urgencies.
        public static let urgencies = ["very-low", "low", "normal", "high"]
    }
}
