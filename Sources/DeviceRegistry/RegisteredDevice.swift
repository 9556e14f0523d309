import Preferences

/// One device of a user, as the registry topic lists it.
public struct RegisteredDevice: Sendable, Equatable, Hashable {
    /// How FCM addresses the device.
    public enum Kind: String, Sendable, Hashable {
        /// A Firebase installation ID (FCM's `fid` target).
        case fid
        /// A registration token (FCM's `token` target).
        case token
    }

    /// The platforms a device may name (`platform`).
    public static let platforms: Set<String> = ["android", "ios", "web"]

    public var kind: Kind
    /// The FID or the token.
    public var id: String
    /// `android`, `ios` or `web`; nil when the record does not say.
    public var platform: String?
    /// The Firebase project by its name in `fcm.projects`; nil for the default project.
    public var app: String?
    /// Free-form labels (for example a language), for mappings to choose devices by.
    public var labels: [String: String]
    /// The app's push-to-start tokens for Live Activities on this device, by `ActivityAttributes`
    /// type name (ActivityKit gives one per type: `Activity<Attributes>.pushToStartTokenUpdates`).
    public var pushToStart: [String: String]
    /// For an activity's entry (key `activity:<key>`): the device's push token for that Live
    /// Activity.
    public var liveActivityToken: String?
    /// Categories muted on this device only (an app's per-device notification settings),
    /// sorted, each once.
    public var muted: [String]

    public init(
        kind: Kind, id: String, platform: String? = nil, app: String? = nil, labels: [String: String] = [:], pushToStart: [String: String] = [:],
        liveActivityToken: String? = nil, muted: [String] = []
    ) {
        self.kind = kind
        self.id = id
        self.platform = platform
        self.app = app
        self.labels = labels
        self.pushToStart = pushToStart
        self.liveActivityToken = liveActivityToken
        self.muted = muted
    }
}

/// What one registry record says about one user.
public struct RegistryUpdate: Sendable, Equatable {
    /// The record's key: the user ID.
    public var user: String
    /// The user's devices (possibly none); nil for a tombstone, which deletes the user.
    public var devices: [RegisteredDevice]?
    /// What the user chose (time zone, muted categories, quiet hours).
    public var preferences: UserChoices
    /// Preference members left out because their value is not one the format allows (the
    /// devices still apply): `time_zone`, `muted`, `quiet_hours`, `devices[].muted`.
    public var droppedPreferences: [String]

    public init(user: String, devices: [RegisteredDevice]?, preferences: UserChoices = .init(), droppedPreferences: [String] = []) {
        self.user = user
        self.devices = devices
        self.preferences = preferences
        self.droppedPreferences = droppedPreferences
    }
}

/// What the registry holds for one user.
public struct RegisteredUser: Sendable, Equatable {
    public var devices: [RegisteredDevice]
    public var preferences: UserChoices

    public init(devices: [RegisteredDevice], preferences: UserChoices = .init()) {
        self.devices = devices
        self.preferences = preferences
    }
}
