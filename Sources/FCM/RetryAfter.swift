import Foundation

/// Parses the `Retry-After` header: delay-seconds (`120`) or an HTTP-date
/// (`Wed, 21 Oct 2015 07:28:00 GMT`, RFC 9110 §10.2.3).
public enum RetryAfter {
    /// The delay from `now`; nil if unparseable. A date in the past gives zero.
    public static func parse(_ value: String, now: Date = Date()) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int64(text), seconds >= 0 { return .seconds(seconds) }
        for format in formats {
            if let date = format.date(from: text) {
                let delta = max(0, date.timeIntervalSince(now))
                return .milliseconds(Int64((delta * 1000).rounded(.up)))
            }
        }
        return nil
    }

    /// IMF-fixdate, plus the obsolete RFC 850 and asctime forms recipients must accept.
    private static let formats: [DateFormatter] = [
        "EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy",
    ].map { pattern in
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = pattern
        return f
    }
}
