import Dates
import Testing

/// Real zones from this machine's tz database (Debian's tzdata, /usr/share/zoneinfo).
@Suite("Zones read from /usr/share/zoneinfo")
struct ZoneFileTests {
    let database = TimeZoneDatabase(directory: "/usr/share/zoneinfo")

    func zone(_ name: String) throws -> ZoneRules { try #require(database.zone(named: name), "\(name)") }

    @Test("Europe/Berlin: 2027's transitions, before the first (LMT +0:53:28) and after the last (the footer)")
    func berlin() throws {
        let berlin = try zone("Europe/Berlin")
        #expect(berlin.footer == (try PosixTimeZone("CET-1CEST,M3.5.0,M10.5.0/3")))
        #expect(berlin.offset(atUnixSeconds: utc(2027, 3, 28, 0, 59, 59)) == 3600)
        #expect(berlin.offset(atUnixSeconds: utc(2027, 3, 28, 1)) == 7200)
        #expect(berlin.offset(atUnixSeconds: utc(2027, 10, 31, 0, 59, 59)) == 7200)
        #expect(berlin.offset(atUnixSeconds: utc(2027, 10, 31, 1)) == 3600)
        #expect(berlin.offset(atUnixSeconds: utc(1850, 1, 1)) == 3208)
        #expect(berlin.offset(atUnixSeconds: utc(1945, 6, 1)) == 10_800)  // "Berlin double summer time"
        for year: Int64 in [2038, 2050, 2100, 9999] {
            #expect(berlin.offset(atUnixSeconds: utc(year, 7, 1)) == 7200, "\(year)")
            #expect(berlin.offset(atUnixSeconds: utc(year, 12, 1)) == 3600, "\(year)")
        }
        // Resolving local times: ordinary, in the spring gap, in the autumn overlap.
        #expect(berlin.instant(localDay: localDay(2027, 7, 1), secondOfDay: seconds(12, 0)) == utc(2027, 7, 1, 10))
        #expect(berlin.instant(localDay: localDay(2027, 3, 28), secondOfDay: seconds(2, 30)) == utc(2027, 3, 28, 1, 30))
        #expect(berlin.instant(localDay: localDay(2027, 3, 28), secondOfDay: seconds(3, 0)) == utc(2027, 3, 28, 1))
        #expect(berlin.instant(localDay: localDay(2027, 10, 31), secondOfDay: seconds(2, 30)) == utc(2027, 10, 31, 0, 30))
        #expect(berlin.instant(localDay: localDay(2027, 10, 31), secondOfDay: seconds(3, 0)) == utc(2027, 10, 31, 2))
        // In 2050 the same through the footer.
        #expect(berlin.instant(localDay: localDay(2050, 3, 27), secondOfDay: seconds(2, 30)) == utc(2050, 3, 27, 1, 30))
        #expect(berlin.instant(localDay: localDay(2050, 10, 30), secondOfDay: seconds(2, 30)) == utc(2050, 10, 30, 0, 30))
    }

    @Test("America/New_York: transitions at 02:00 local")
    func newYork() throws {
        let ny = try zone("America/New_York")
        #expect(ny.offset(atUnixSeconds: utc(2027, 3, 14, 6, 59, 59)) == -18_000)
        #expect(ny.offset(atUnixSeconds: utc(2027, 3, 14, 7)) == -14_400)
        #expect(ny.offset(atUnixSeconds: utc(2027, 11, 7, 5, 59, 59)) == -14_400)
        #expect(ny.offset(atUnixSeconds: utc(2027, 11, 7, 6)) == -18_000)
        #expect(ny.instant(localDay: localDay(2027, 3, 14), secondOfDay: seconds(2, 30)) == utc(2027, 3, 14, 7, 30))
        #expect(ny.instant(localDay: localDay(2027, 11, 7), secondOfDay: seconds(1, 30)) == utc(2027, 11, 7, 5, 30))
        #expect(ny.offset(atUnixSeconds: utc(2090, 7, 4)) == -14_400)
    }

    @Test("Australia/Sydney and Australia/Lord_Howe: southern hemisphere; a 30-minute DST")
    func australia() throws {
        let sydney = try zone("Australia/Sydney")
        #expect(sydney.offset(atUnixSeconds: utc(2027, 1, 15)) == 39_600)
        #expect(sydney.offset(atUnixSeconds: utc(2027, 4, 3, 16)) == 36_000)
        #expect(sydney.offset(atUnixSeconds: utc(2027, 10, 2, 16)) == 39_600)
        let lordHowe = try zone("Australia/Lord_Howe")
        #expect(lordHowe.offset(atUnixSeconds: utc(2027, 4, 3, 14, 59, 59)) == 39_600)
        #expect(lordHowe.offset(atUnixSeconds: utc(2027, 4, 3, 15)) == 37_800)
        #expect(lordHowe.offset(atUnixSeconds: utc(2027, 10, 2, 15, 29, 59)) == 37_800)
        #expect(lordHowe.offset(atUnixSeconds: utc(2027, 10, 2, 15, 30)) == 39_600)
        // 02:15 on 3 October does not exist (02:00 → 02:30): taken at +10:30, it is 02:45 at +11.
        #expect(lordHowe.instant(localDay: localDay(2027, 10, 3), secondOfDay: seconds(2, 15)) == utc(2027, 10, 2, 15, 45))
        // 01:45 on 4 April happens twice (02:00 → 01:30): the first, at +11.
        #expect(lordHowe.instant(localDay: localDay(2027, 4, 4), secondOfDay: seconds(1, 45)) == utc(2027, 4, 3, 14, 45))
    }

    @Test("Asia/Kathmandu +05:45; Europe/Dublin's negative DST; Etc/GMT-3 and UTC never change")
    func offsets() throws {
        let kathmandu = try zone("Asia/Kathmandu")
        #expect(kathmandu.offset(atUnixSeconds: utc(2027, 6, 1)) == 20_700)
        #expect(kathmandu.instant(localDay: localDay(2027, 6, 1), secondOfDay: seconds(22, 0)) == utc(2027, 6, 1, 16, 15))
        let dublin = try zone("Europe/Dublin")
        #expect(dublin.footer == (try PosixTimeZone("IST-1GMT0,M10.5.0,M3.5.0/1")))
        for year: Int64 in [2027, 2045] {
            #expect(dublin.offset(atUnixSeconds: utc(year, 1, 15)) == 0)
            #expect(dublin.offset(atUnixSeconds: utc(year, 7, 15)) == 3600)
        }
        let gmtMinus3 = try zone("Etc/GMT-3")
        for t in [utc(1800, 1, 1), 0, utc(2027, 3, 28, 1), utc(9999, 1, 1)] {
            #expect(gmtMinus3.offset(atUnixSeconds: t) == 10_800)
            #expect(ZoneRules.utc.offset(atUnixSeconds: t) == 0)
        }
        #expect(gmtMinus3.instant(localDay: localDay(2027, 1, 1), secondOfDay: 0) == utc(2026, 12, 31, 21))
        #expect(ZoneRules.utc.instant(localDay: localDay(2027, 1, 1), secondOfDay: 5) == utc(2027, 1, 1, 0, 0, 5))
    }

    @Test("Pacific/Apia skipped 2011-12-30; America/Sao_Paulo abolished DST in 2019")
    func historyChanges() throws {
        let apia = try zone("Pacific/Apia")
        #expect(apia.offset(atUnixSeconds: utc(2011, 12, 30, 9, 59, 59)) == -36_000)
        #expect(apia.offset(atUnixSeconds: utc(2011, 12, 30, 10)) == 50_400)
        // No instant has 2011-12-30 as its local date: 07:30 that day is taken at −10, 07:30 on the 31st.
        #expect(apia.instant(localDay: localDay(2011, 12, 30), secondOfDay: seconds(7, 30)) == utc(2011, 12, 30, 17, 30))
        #expect(apia.instant(localDay: localDay(2011, 12, 31), secondOfDay: seconds(7, 30)) == utc(2011, 12, 30, 17, 30))
        #expect(apia.instant(localDay: localDay(2011, 12, 29), secondOfDay: seconds(23, 59)) == utc(2011, 12, 30, 9, 59))
        let saoPaulo = try zone("America/Sao_Paulo")
        #expect(saoPaulo.offset(atUnixSeconds: utc(2018, 12, 1)) == -7200)
        #expect(saoPaulo.offset(atUnixSeconds: utc(2019, 12, 1)) == -10_800)
        #expect(saoPaulo.offset(atUnixSeconds: utc(2040, 12, 1)) == -10_800)
        #expect(saoPaulo.footer == PosixTimeZone(standardOffset: -10_800, daylight: nil))
    }
}
