import Foundation

/// The wall clock, in whole seconds since the Unix epoch: the `now` of rendering, which turns a
/// TTL into `apns-expiration`. Rendering takes it as a parameter, so tests fix it.
public enum EpochClock {
    public static func seconds() -> Int64 {
        Int64(Date().timeIntervalSince1970.rounded(.down))
    }
}
