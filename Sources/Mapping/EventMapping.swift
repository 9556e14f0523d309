/// Where a string comes from: the event, a literal, or the event's ID.
public enum ValueSource: Sendable, Equatable {
    case literal(String)
    /// An event field (JSON Pointer, relative to the event's data), with a default for null or missing.
    case field(JSONPointer, default: String?)
    /// The event's ID (CloudEvents `id`/`ce_id`, the configured pointer, or the Kafka coordinates).
    case eventID
    /// The event's ID, `:` and this push's name (`{from: push_id}`): two pushes of one event,
    /// each replacing only its own duplicates.
    case pushID(String)
    /// What a digest window gathered (`{digest: count}`): only within a digest's `many`.
    case digest(DigestValue)

    var isLiteral: Bool {
        if case .literal = self { true } else { false }
    }
}

/// Who receives the push. Exactly one per mapping.
public enum MappingTarget: Sendable, Equatable {
    /// One device: a Firebase Installation ID (`fid`) or a registration token (`token`).
    case device(MessageTarget.Kind, ValueSource)
    /// Fan-out: one message per FID or token.
    case devices(MessageTarget.Kind, DeviceListSource)
    /// A topic name, without `/topics/`.
    case topic(ValueSource)
    /// A condition such as `'a' in topics && 'b' in topics`.
    case condition(ValueSource)
    /// A user: one message per device the device registry lists for them (a FID or a token
    /// each), optionally only some platforms' or apps'.
    case user(ValueSource, DeviceFilter)

    /// The target field each message gets.
    public var kind: MessageTarget.Kind {
        switch self {
        case .device(let kind, _), .devices(let kind, _): kind
        case .topic: .topic
        case .condition: .condition
        case .user: .token  // per device, a FID or a token: the same size limit
        }
    }
}

/// Which of a user's devices a `user` target sends to: nil lets every one through.
public struct DeviceFilter: Sendable, Equatable {
    /// The registry's platform names (`android`, `ios`, `web`).
    public var platforms: Set<String>?
    /// Names of the config's `fcm.projects`.
    public var apps: Set<String>?
    /// The mapping's `platforms`: a device the registry says is of another platform would get
    /// nothing it shows (a web browser, a message with only `android` and `apns`), so it is left
    /// out. A device of unknown platform passes.
    public var mappingPlatforms: Set<String>?

    public init(platforms: Set<String>? = nil, apps: Set<String>? = nil, mappingPlatforms: Set<String>? = nil) {
        self.platforms = platforms
        self.apps = apps
        self.mappingPlatforms = mappingPlatforms
    }

    /// Whether `device` passes. A device without a platform or an app passes only when that
    /// part is filtered by the target (not by the mapping's platforms).
    public func admits(_ device: UserDevice) -> Bool {
        if let platforms, !(device.platform.map(platforms.contains) ?? false) { return false }
        if let mappingPlatforms, let platform = device.platform, !mappingPlatforms.contains(platform) { return false }
        if let apps, !(device.app.map(apps.contains) ?? false) { return false }
        return true
    }
}

/// One of a user's devices, as the device registry lists it.
public struct UserDevice: Sendable, Equatable {
    /// ``MessageTarget/Kind/fid`` or ``MessageTarget/Kind/token``.
    public var kind: MessageTarget.Kind
    public var id: String
    public var platform: String?
    /// The name of the project in the config's `fcm.projects` whose app it is; nil: the
    /// mapping's project.
    public var app: String?
    /// Live Activity push-to-start tokens by `ActivityAttributes` type.
    public var pushToStart: [String: String]
    /// In an activity's entry: the device's token for that Live Activity.
    public var liveActivityToken: String?
    /// Categories muted on this device only.
    public var muted: [String]

    public init(
        kind: MessageTarget.Kind, id: String, platform: String? = nil, app: String? = nil, pushToStart: [String: String] = [:],
        liveActivityToken: String? = nil, muted: [String] = []
    ) {
        self.kind = kind
        self.id = id
        self.platform = platform
        self.app = app
        self.pushToStart = pushToStart
        self.liveActivityToken = liveActivityToken
        self.muted = muted
    }
}

public enum DeviceListSource: Sendable, Equatable {
    case literal([String])
    /// An event field holding an array of strings.
    case field(JSONPointer)
}

/// A localization key per platform and its ordered arguments.
public struct LocalizedText: Sendable, Equatable {
    public var androidKey: String
    public var iosKey: String
    public var args: [ValueSource]
}

/// A title, subtitle or body: a localization key the phone looks up, plain text, or a key with a
/// plain-text fallback (docs/mapping.md, *Texts*).
public struct NotificationText: Sendable, Equatable {
    /// The key and its args; nil for plain text.
    public var key: LocalizedText?
    /// Without a key, the text itself, on every platform. Beside a key, the fallback: sent only
    /// to iOS, which shows it when the app lacks the key (observed: jchambers/pushy#799). Never
    /// to Android, whose SDK shows a plain text and never looks the key up when both are sent
    /// (firebase-android-sdk#3938, `NotificationParams.getPossiblyLocalizedString`).
    public var text: ValueSource?

    public init(key: LocalizedText? = nil, text: ValueSource? = nil) {
        self.key = key
        self.text = text
    }
}

public enum Platform: String, Sendable, CaseIterable {
    case android, ios, web
}

/// One event type's mapping, compiled from a mapping file.
public struct EventMapping: Sendable {
    public var eventType: String
    /// Where it was defined, for messages.
    public var file: String
    public var line: Int
    public var target: MappingTarget
    public var title: NotificationText?
    /// iOS only (`subtitle`, `subtitle-loc-key`): Android and FCM's shared notification have none.
    public var subtitle: NotificationText?
    public var body: NotificationText?
    public var platforms: Set<Platform> = [.android, .ios]
    /// Android `ttl` and `apns-expiration`; nil keeps FCM's defaults.
    public var ttl: TTL?
    /// Events older than this are not sent (``MaxAge``).
    public var maxAge: MaxAge?
    /// When the push goes, if later than the event is read (`send_at`); nil: at once.
    public var sendAt: SendAt?
    /// One push per window of a user's events (`digest:`); nil: one per event.
    public var digest: Digest?
    public var highPriority: Bool?
    /// A semantic group ("chat-42"): Android `collapse_key` (FCM keeps at most 4 per device)
    /// and `apns-collapse-id`.
    public var collapseKey: ValueSource?
    /// Replaces a shown notification with the same ID, so at-least-once duplicates show once:
    /// Android `notification.tag`, and `apns-collapse-id` unless a collapse key sets it.
    public var replaceID: ValueSource?
    public var silent = false
    /// An image URL (https) for both platforms: Android `notification.image`, APNs
    /// `fcm_options.image` with `mutable-content: 1`.
    public var image: ValueSource?
    /// iOS `interruption-level`.
    public var interruption: InterruptionLevel?
    /// iOS `relevance-score`, from 0 to 1.
    public var relevance: Double?
    /// The count the app's icon shows: iOS `badge` and Android `notification_count`, an integer
    /// of at least 0.
    public var badge: ValueSource?
    public var android = AndroidOptions()
    public var apns = APNSOptions()
    public var web = WebOptions()
    public var data: [(key: String, value: ValueSource)] = []
    public var analyticsLabel: String?
    /// Which Firebase project sends it: a name of the config's `fcm.projects`, fixed or from an
    /// event field; nil: the default project.
    public var project: ValueSource?
    /// A fixed TTL in seconds; nil for none or `ttl: remaining`.
    public var ttlSeconds: Int? {
        if case .seconds(let s)? = ttl { s } else { nil }
    }

    public enum TTL: Sendable, Equatable {
        case seconds(Int)
        /// What is left of `max_age` when the event is sent, so a push never arrives later than
        /// the event is worth (`ttl: remaining`; the loader requires a `max_age`).
        case remaining
    }

    /// Per-user rules: category, critical, quiet hours (docs/rules.md).
    public var rules = UserRules()
    /// `cap` and `dedup`: rules whose state the consumer group shares (docs/rules-state.md).
    public var stateful = StatefulRules()

    /// Set for a Live Activity mapping (`activity:`): its pushes are rendered from it alone.
    public var activity: LiveActivity?

    /// Set for one of an event type's variants (``VariantSet``): its name and conditions.
    public var variant: Variant?
    /// The `fcm:` overlay: any other field of FCM's message (docs/mapping.md, *Any other FCM
    /// field*).
    var overlay: FCMOverlay?

    /// The compiled byte template (set by ``MappingSet/load(files:)``); nil renders via the tree.
    var template: MessageTemplate?

    /// How an iOS notification breaks through Focus and the lock screen (Apple's
    /// `UNNotificationInterruptionLevel`, written as the `interruption-level` aps key).
    public enum InterruptionLevel: String, Sendable, CaseIterable {
        case passive, active
        case timeSensitive = "time-sensitive"
        case critical
    }
}
