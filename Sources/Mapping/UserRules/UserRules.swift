import Dates
import Preferences

/// A mapping's per-user rules (docs/rules.md): which category its pushes are, whether they are
/// critical, and the quiet hours they respect. Applied to each user's preferences, from the
/// device registry, before anything is sent (``UserRules/judge(_:user:now:)``).
public struct UserRules: Sendable, Equatable {
    /// What a user or a device mutes (`category:`); nil: no one can mute these pushes.
    public var category: String?
    /// Bypasses mutes and quiet hours (`critical: true`): a security alert, a 2FA code.
    public var critical = false
    /// The quiet hours these pushes respect; nil: none (a user's own quiet hours do not apply
    /// to a mapping without `quiet_hours`).
    public var quietHours: QuietHours?
    /// A push inside the quiet hours waits until they end (`outside: defer`, docs/timers.md)
    /// instead of being withheld.
    public var deferInQuietHours = false
    /// For a push to devices the event names (`fid`, `token`, `fids`, `tokens`): the user whose
    /// preferences apply (`user: {field: /user_id}`). A `user` target names its user itself.
    public var user: ValueSource?

    public enum QuietHours: Sendable, Equatable {
        /// This window in the user's time zone, unless the user set their own (or `off`).
        case window(QuietWindow)
        /// Only the user's own quiet hours (`quiet_hours: user`); none for a user without.
        case usersOwn
    }

    public init(category: String? = nil, critical: Bool = false, quietHours: QuietHours? = nil, user: ValueSource? = nil) {
        self.category = category
        self.critical = critical
        self.quietHours = quietHours
        self.user = user
    }

    /// No rule: every push goes (most mappings).
    public var isEmpty: Bool { category == nil && quietHours == nil }
}

/// Why a push was not sent to a user, though it could have been (docs/rules.md, *Order*).
public enum WithholdRule: String, Sendable, Equatable, Hashable, CaseIterable {
    /// The user muted the mapping's category.
    case muted
    /// The device muted the mapping's category (the user's other devices still get it).
    case deviceMuted = "device_muted"
    /// The user's local time is inside the quiet hours.
    case quietHours = "quiet_hours"
    /// The mapping's `cap` was full for the push's key (docs/rules.md).
    case cap
    /// FCM already acknowledged this push (same event, mapping and device) within the
    /// mapping's `dedup` window, or a cap's (docs/rules.md).
    case duplicate
}

/// A user as the rules see them: their devices and what they chose, from the device registry.
public struct UserRecord: Sendable, Equatable {
    public var devices: [UserDevice]
    public var preferences: UserPreferences

    public init(devices: [UserDevice], preferences: UserPreferences = .init()) {
        self.devices = devices
        self.preferences = preferences
    }
}

/// What a user chose (``UserChoices``, from the device registry), with their time zone resolved:
/// the zone the record names, else `rules.default_time_zone` (for a user without one, or with
/// one this worker's tzdata does not know).
public struct UserPreferences: Sendable, Equatable {
    public var choices: UserChoices
    /// The zone local times are judged in.
    public var zone: ZoneRules
    /// The zone the user's record named, when the worker did not know it (and used ``zone``).
    public var unknownZone: String?

    public init(choices: UserChoices = .init(), zone: ZoneRules = .utc, unknownZone: String? = nil) {
        self.choices = choices
        self.zone = zone
        self.unknownZone = unknownZone
    }
}
