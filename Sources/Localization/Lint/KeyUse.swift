/// One localization key a mapping sends: the linter's input, built from mapping files by the
/// caller (this module does not know the mapping format).
public struct KeyUse: Sendable, Hashable, Codable {
    /// Which part of the notification the key fills.
    public enum Field: String, Sendable, Hashable, Codable {
        case title, subtitle, body
    }

    public var platform: DevicePlatform
    public var key: String
    /// How many loc args the mapping sends with it (0: no `*_loc_args` at all).
    public var argumentCount: Int
    public var field: Field
    /// The event type whose mapping sends it.
    public var eventType: String
    /// Where that event type is defined in its mapping file.
    public var location: SourceLocation
    /// The key sent to the other platform for the same field, when the mapping targets both.
    public var counterpartKey: String?

    public init(
        platform: DevicePlatform, key: String, argumentCount: Int, field: Field, eventType: String,
        location: SourceLocation, counterpartKey: String? = nil
    ) {
        self.platform = platform
        self.key = key
        self.argumentCount = argumentCount
        self.field = field
        self.eventType = eventType
        self.location = location
        self.counterpartKey = counterpartKey
    }
}
