import Dates

/// Seconds since the epoch of a UT date and time.
func utc(_ year: Int64, _ month: Int64, _ day: Int64, _ hour: Int64 = 0, _ minute: Int64 = 0, _ second: Int64 = 0) -> Int64 {
    CivilDate.days(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
}

/// Days since 1970-01-01 of a calendar date (a local date for `ZoneRules.instant`).
func localDay(_ year: Int64, _ month: Int64, _ day: Int64) -> Int64 { CivilDate.days(year: year, month: month, day: day) }

func seconds(_ hour: Int32, _ minute: Int32) -> Int32 { hour * 3600 + minute * 60 }
