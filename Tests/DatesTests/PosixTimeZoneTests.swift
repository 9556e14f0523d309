import Dates
import Testing

/// TZif footers: POSIX TZ strings with RFC 8536 §3.3's extensions.
@Suite("POSIX TZ footer rules")
struct PosixTimeZoneTests {
    typealias Rule = PosixTimeZone.Rule

    @Test("each form parses to its offsets and rules")
    func forms() throws {
        let berlin = try PosixTimeZone("CET-1CEST,M3.5.0,M10.5.0/3")
        #expect(berlin.standardOffset == 3600)
        #expect(berlin.daylight?.offset == 7200)
        #expect(berlin.daylight?.start == Rule(day: .monthWeekDay(month: 3, week: 5, weekday: 0), time: 7200))
        #expect(berlin.daylight?.end == Rule(day: .monthWeekDay(month: 10, week: 5, weekday: 0), time: 10_800))
        let lordHowe = try PosixTimeZone("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0")
        #expect(lordHowe.standardOffset == 37_800)
        #expect(lordHowe.daylight?.offset == 39_600)
        let dublin = try PosixTimeZone("IST-1GMT0,M10.5.0,M3.5.0/1")
        #expect(dublin.standardOffset == 3600)
        #expect(dublin.daylight?.offset == 0)
        #expect(dublin.daylight?.end.time == 3600)
        let saoPaulo = try PosixTimeZone("<-03>3")
        #expect(saoPaulo == PosixTimeZone(standardOffset: -10_800, daylight: nil))
        let newYork = try PosixTimeZone("EST5EDT,M3.2.0,M11.1.0")
        #expect(newYork.standardOffset == -18_000)
        #expect(newYork.daylight?.offset == -14_400)  // one hour ahead when not written
        #expect(try PosixTimeZone("XXX3YYY,J60/0,300/-1").daylight?.start == Rule(day: .julian(60), time: 0))
        #expect(try PosixTimeZone("XXX3YYY,J60/0,300/-1").daylight?.end == Rule(day: .zeroBased(300), time: -3600))
        #expect(try PosixTimeZone("XXX+3:30:15YYY,M1.1.0/167,M12.5.6/-167:59:59").daylight?.end.time == -(167 * 3600 + 3599))
        #expect(try PosixTimeZone("<+0545>-5:45").standardOffset == 20_700)
    }

    @Test("malformed strings are refused, saying where")
    func malformed() {
        for text in [
            "", "CE-1", "CET", "CET-25", "CET-1:60", "CET-1CEST", "CET-1CEST,M3.5.0", "CET-1CEST,M13.5.0,M10.5.0",
            "CET-1CEST,M3.6.0,M10.5.0", "CET-1CEST,M3.5.7,M10.5.0", "CET-1CEST,M3.5,M10.5.0", "XXX3YYY,J0,J365", "XXX3YYY,J366,J1",
            "XXX3YYY,366,1", "CET-1CEST,M3.5.0/168,M10.5.0", "<+1>1", "<+03-3", "<+0 3>-3", "CET-1CEST,M3.5.0,M10.5.0/3x",
            "CET-1 CEST,M3.5.0,M10.5.0", "CET-1CEST-2-3,M3.5.0,M10.5.0", "1CET", "CET-1CEST,,M10.5.0",
        ] {
            #expect(throws: ZoneRulesError.self, "\(text)") { try PosixTimeZone(text) }
        }
        do {
            _ = try PosixTimeZone("CET-1CEST")
        } catch {
            #expect(error.description.contains("a daylight time without a rule"))
        }
    }

    @Test("Europe/Berlin's rule: 2027's transitions to the second, and in 2100 and 9999 on the last Sundays")
    func berlin() throws {
        let rule = try PosixTimeZone("CET-1CEST,M3.5.0,M10.5.0/3")
        #expect(rule.offset(atUnixSeconds: utc(2027, 3, 28, 0, 59, 59)) == 3600)
        #expect(rule.offset(atUnixSeconds: utc(2027, 3, 28, 1)) == 7200)
        #expect(rule.offset(atUnixSeconds: utc(2027, 10, 31, 0, 59, 59)) == 7200)
        #expect(rule.offset(atUnixSeconds: utc(2027, 10, 31, 1)) == 3600)
        for year: Int64 in [2100, 2400, 9999] {
            let summer = rule.period(at: utc(year, 7, 1))
            #expect(summer.offset == 7200)
            for (instant, month) in [(summer.start, Int64(3)), (summer.end, 10)] {
                let (day, second) = CivilDate.split(seconds: instant)
                let date = CivilDate.from(daysSinceEpoch: day)
                #expect(second == 3600 && date.year == year && date.month == month && date.day > 24, "\(year): \(date)")
                #expect(CivilDate.weekday(daysSinceEpoch: day) == 0, "\(year)-\(month): a Sunday")
            }
        }
    }

    @Test("southern hemisphere, negative DST, rule times below 0 and above 24 h")
    func unusualRules() throws {
        let sydney = try PosixTimeZone("AEST-10AEDT,M10.1.0,M4.1.0/3")
        #expect(sydney.offset(atUnixSeconds: utc(2027, 1, 1)) == 39_600)
        #expect(sydney.offset(atUnixSeconds: utc(2027, 4, 3, 15, 59, 59)) == 39_600)  // 04-04 02:59:59 AEDT
        #expect(sydney.offset(atUnixSeconds: utc(2027, 4, 3, 16)) == 36_000)
        #expect(sydney.offset(atUnixSeconds: utc(2027, 10, 2, 16)) == 39_600)  // 10-03 02:00 AEST
        let dublin = try PosixTimeZone("IST-1GMT0,M10.5.0,M3.5.0/1")
        #expect(dublin.offset(atUnixSeconds: utc(2027, 1, 15)) == 0)
        #expect(dublin.offset(atUnixSeconds: utc(2027, 3, 28, 1)) == 3600)
        #expect(dublin.offset(atUnixSeconds: utc(2027, 10, 31, 0, 59, 59)) == 3600)
        #expect(dublin.offset(atUnixSeconds: utc(2027, 10, 31, 1)) == 0)
        // America/Nuuk since 2023: DST from Saturday 23:00 local (-1:00 on the last Sunday).
        let nuuk = try PosixTimeZone("<-02>2<-01>,M3.5.0/-1,M10.5.0/0")
        #expect(nuuk.offset(atUnixSeconds: utc(2027, 3, 28, 0, 59, 59)) == -7200)
        #expect(nuuk.offset(atUnixSeconds: utc(2027, 3, 28, 1)) == -3600)
        #expect(nuuk.offset(atUnixSeconds: utc(2027, 10, 31, 0, 59, 59)) == -3600)
        #expect(nuuk.offset(atUnixSeconds: utc(2027, 10, 31, 1)) == -7200)
        // Asia/Jerusalem: the Friday before the last Sunday of March at 02:00, as "4th Thursday at 26:00".
        let jerusalem = try PosixTimeZone("IST-2IDT,M3.4.4/26,M10.5.0")
        #expect(jerusalem.offset(atUnixSeconds: utc(2027, 3, 25, 23, 59, 59)) == 7200)
        #expect(jerusalem.offset(atUnixSeconds: utc(2027, 3, 26)) == 10_800)
        // 167 hours: a week after the first Sunday of January 2027 (the 3rd) at 00:00, minus an hour.
        let week = try PosixTimeZone("XXX0YYY,M1.1.0/167,M12.5.0/0")
        #expect(week.offset(atUnixSeconds: utc(2027, 1, 9, 22, 59, 59)) == 0)
        #expect(week.offset(atUnixSeconds: utc(2027, 1, 9, 23)) == 3600)
    }

    @Test("Jn never counts February 29, n does")
    func julianDays() throws {
        let j = try PosixTimeZone("XXX0YYY,J60/0,J300/0")
        let n = try PosixTimeZone("XXX0YYY,59/0,300/0")
        for year: Int64 in [2027, 2028] {
            #expect(j.period(at: utc(year, 6, 1)).start == utc(year, 3, 1))
        }
        #expect(n.period(at: utc(2027, 6, 1)).start == utc(2027, 3, 1))
        #expect(n.period(at: utc(2028, 6, 1)).start == utc(2028, 2, 29))
    }

    @Test("daylight time all year (RFC 8536 §3.3.1's example): no standard time around New Year")
    func allYear() throws {
        let rule = try PosixTimeZone("EST5EDT,0/0,J365/25")
        for t in [
            utc(2026, 12, 31, 23, 59, 59), utc(2027, 1, 1), utc(2027, 1, 1, 5), utc(2027, 1, 1, 4, 59, 59), utc(2027, 7, 1), utc(2028, 12, 31, 12),
        ] {
            #expect(rule.offset(atUnixSeconds: t) == -14_400, "\(t)")
        }
    }

    @Test("extreme instants: no trap, the standard offset or the rule's")
    func extremes() throws {
        let rule = try PosixTimeZone("CET-1CEST,M3.5.0,M10.5.0/3")
        for t in [Int64.min, Int64.min + 1, -(1 << 52), 1 << 52, Int64.max - 1, Int64.max] {
            #expect([3600, 7200].contains(rule.offset(atUnixSeconds: t)))
        }
    }
}
