import Foundation

/// RFC 3339 timestamps in UTC with milliseconds (`2026-11-22T10:00:00.123Z`), as JSON records and
/// logs carry them; without Foundation's formatters.
public enum RFC3339 {
    public static func format(milliseconds: Int64) -> String {
        let ms = Int(((milliseconds % 1000) + 1000) % 1000)
        let (days, seconds) = CivilDate.split(seconds: (milliseconds - Int64(ms)) / 1000)
        let (year, month, day) = CivilDate.from(daysSinceEpoch: days)
        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        return
            "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2)).\(pad(Int64(ms), 3))Z"
    }

    /// Milliseconds since the epoch, now.
    public static func nowMilliseconds() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }
}
