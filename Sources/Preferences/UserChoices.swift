import Dates

/// What a user chose about their notifications (docs/rules.md): the device registry reads it from
/// the user's record and stores it; the per-user rules read it when a push is about to go to them.
///
/// Every member is optional; an empty value (``isEmpty``) is a user who chose nothing, and the
/// mappings' own rules apply.
public struct UserChoices: Sendable, Equatable, Hashable {
    /// The user's IANA time zone (`Europe/Berlin`); nil: the worker's `rules.default_time_zone`.
    /// Kept as given: a zone this worker's tzdata does not know is judged when a push needs it.
    public var timeZone: String?
    /// Categories the user muted on every device (sorted, each once).
    public var muted: [String]
    /// The user's own quiet hours, replacing the mappings'; nil: the mappings'.
    public var quietHours: QuietHours?

    public enum QuietHours: Sendable, Equatable, Hashable {
        /// No quiet hours for this user (`"quiet_hours": "off"`), whatever the mappings say.
        case off
        case window(QuietWindow)
    }

    public init(timeZone: String? = nil, muted: [String] = [], quietHours: QuietHours? = nil) {
        self.timeZone = timeZone
        self.muted = muted
        self.quietHours = quietHours
    }

    public var isEmpty: Bool { timeZone == nil && muted.isEmpty && quietHours == nil }
}

/// A notification category: what a mapping's pushes are (`category:`), and what users and
/// devices mute.
public enum NotificationCategory {
    /// `^[a-z0-9][a-z0-9_.-]{0,63}$`: lower case, so `Marketing` and `marketing` are never two.
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        func allowed(_ b: UInt8, first: Bool) -> Bool {
            (b >= 0x61 && b <= 0x7a) || (b >= 0x30 && b <= 0x39) || (!first && (b == 0x5f || b == 0x2e || b == 0x2d))
        }
        return bytes.enumerated().allSatisfy { allowed($0.element, first: $0.offset == 0) }
    }

    public static let syntax = "lower-case letters, digits, `_`, `.` and `-`, starting with a letter or digit, at most 64"
}
