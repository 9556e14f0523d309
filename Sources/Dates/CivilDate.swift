/// The proleptic Gregorian calendar date of a day count from 1970-01-01, by Howard Hinnant's
/// civil-from-days algorithm (chrono-Compatible Low-Level Date Algorithms): exact for every
/// Int64 day count a timestamp in seconds can reach, negative ones included, with no Foundation.
/// RFC 3339 timestamps, Avro's `date` and Protobuf's Timestamp are all written with it.
package enum CivilDate {
    /// The day (from 1970-01-01) that `seconds` since the epoch fall on, and the second within it
    /// (0 ..< 86,400): floor division, so a time before 1970 lands on its own day.
    package static func split(seconds: Int64) -> (days: Int64, secondOfDay: Int64) {
        let (days, second) = seconds.quotientAndRemainder(dividingBy: 86_400)
        return second < 0 ? (days - 1, second + 86_400) : (days, second)
    }

    package static func from(daysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days-from-civil, the
    /// inverse of ``from(daysSinceEpoch:)``).
    package static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = month > 2 ? month - 3 : month + 9
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    package static func isLeap(year: Int64) -> Bool { (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 }

    package static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: isLeap(year: year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The day of the week of a day count from 1970-01-01 (a Thursday): 0 Sunday … 6 Saturday.
    package static func weekday(daysSinceEpoch days: Int64) -> Int64 {
        let r = (days + 4) % 7
        return r < 0 ? r + 7 : r
    }
}
