/// What one FCM message asks a device to render: per field, a loc key and its args, a plain
/// text, or both.
public struct LocalizedPush: Sendable, Equatable {
    /// A loc key and its args; `args` is nil when the message has no `*_loc_args`
    /// (the device then shows the string without formatting it). `text` is the plain text sent
    /// beside it, or instead of it (then `key` is nil).
    public struct Text: Sendable, Equatable {
        public var key: String?
        public var args: [String]?
        public var text: String?

        public init(key: String?, args: [String]?, text: String? = nil) {
            self.key = key
            self.args = args
            self.text = text
        }
    }

    public var platform: DevicePlatform
    public var title: Text?
    /// iOS only.
    public var subtitle: Text?
    public var body: Text?

    public init(platform: DevicePlatform, title: Text?, subtitle: Text? = nil, body: Text?) {
        self.platform = platform
        self.title = title
        self.subtitle = subtitle
        self.body = body
    }
}

/// One line of a preview: what a device in a locale shows for one field.
public struct PreviewRow: Sendable, Equatable {
    public enum Outcome: Sendable, Equatable {
        /// The text the device shows.
        case text(String)
        /// The device cannot show the string as intended: why, and what happens instead.
        case failure(String)
    }

    public var locale: String
    public var platform: DevicePlatform
    public var field: KeyUse.Field
    public var key: String
    public var args: [String]?
    public var outcome: Outcome
    /// How the string was found when it is not a plain hit (a fallback, a missing key).
    public var note: String?

    /// The text shown, if the device shows one.
    var outcomeText: String? {
        if case .text(let s) = outcome { s } else { nil }
    }
}
