import Foundation

/// The wall clock, in whole seconds since the Unix epoch: the `now` of rendering, which turns a
/// TTL into `apns-expiration`. Rendering takes it as a parameter, so tests fix it.
public enum EpochClock {
    public static func seconds() -> Int64 {
        Int64(Date().timeIntervalSince1970.rounded(.down))
    }

    /// The same in milliseconds: an event's age is measured to the millisecond.
    public static func milliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}
