import Foundation

/// "HH:MM", the local time of day `minutes` from now in a zone `offsetSeconds` east of UTC: quiet
/// hours around the moment a test runs, so that they hold whenever it runs.
public func localClock(minutesFromNow minutes: Int, offsetSeconds: Int = 0) -> String {
    let local = (Int(Date().timeIntervalSince1970) + offsetSeconds) / 60 + minutes
    let m = ((local % 1_440) + 1_440) % 1_440
    return String(format: "%02d:%02d", m / 60, m % 60)
}
