import Dates

/// The system's wall clock (``SystemWallClock``), in whole seconds or milliseconds since the
/// Unix epoch, for the commands that render once (`render`, `preview`). The worker renders with
/// a ``WallClock`` it is given (``MappingSet/render(_:schema:now:clock:maxAge:users:)``).
public enum EpochClock {
    public static func seconds() -> Int64 { milliseconds() / 1000 }

    /// The same in milliseconds: an event's age is measured to the millisecond.
    public static func milliseconds() -> Int64 { SystemWallClock().nowMilliseconds() }
}
