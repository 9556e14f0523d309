import Dates
import TestSupport
import Testing

/// TZif files written here byte by byte (RFC 8536 §3), read by `ZoneRules(name:tzif:)`.
@Suite("TZif parsing")
struct TZifParsingTests {
    /// A version 1 file typed out by hand: two transitions, two types.
    static let handWrittenV1: [UInt8] =
        Array("TZif".utf8) + [0] + [UInt8](repeating: 0, count: 15)
        + [0, 0, 0, 0] + [0, 0, 0, 0] + [0, 0, 0, 0]  // isutcnt, isstdcnt, leapcnt
        + [0, 0, 0, 2] + [0, 0, 0, 2] + [0, 0, 0, 8]  // timecnt, typecnt, charcnt
        + [0, 0, 0, 0] + [0, 1, 0x51, 0x80]  // transitions at 0 and 86,400
        + [1, 0]  // their types
        + [0, 0, 0x0E, 0x10, 0, 0]  // type 0: +3600, standard, "ONE"
        + [0, 0, 0x1C, 0x20, 1, 4]  // type 1: +7200, daylight, "TWO"
        + Array("ONE\0TWO\0".utf8)

    @Test("a hand-written version 1 file: type 0 before the first transition, the last type after the last")
    func versionOne() throws {
        let zone = try ZoneRules(name: "Test/One", tzif: Self.handWrittenV1)
        #expect(zone.name == "Test/One")
        #expect(zone.footer == nil)
        #expect(zone.offset(atUnixSeconds: -1_000_000_000) == 3600)
        #expect(zone.offset(atUnixSeconds: -1) == 3600)
        #expect(zone.offset(atUnixSeconds: 0) == 7200)
        #expect(zone.offset(atUnixSeconds: 86_399) == 7200)
        #expect(zone.offset(atUnixSeconds: 86_400) == 3600)
        #expect(zone.offset(atUnixSeconds: 4_000_000_000) == 3600)
    }

    @Test("version 2 and 3 files: the 64-bit block (times past 2038 and before 1901), then the footer")
    func versionTwoAndThree() throws {
        for version in ["2", "3", "4"] {
            var file = TZifWriter()
            file.version = UInt8(ascii: Unicode.Scalar(version)!)
            file.types = [.init(offset: 3208, designation: 0), .init(offset: 3600, designation: 4), .init(offset: 7200, isdst: 1, designation: 8)]
            file.designations = "LMT\0CET\0CEST\0"
            file.transitions = [(-3_000_000_000, 1), (2_200_000_000, 2), (2_210_000_000, 1)]
            file.footer = "CET-1CEST,M3.5.0,M10.5.0/3"
            let zone = try ZoneRules(name: "Test/Two", tzif: file.bytes())
            #expect(zone.offset(atUnixSeconds: -3_000_000_001) == 3208)
            #expect(zone.offset(atUnixSeconds: -3_000_000_000) == 3600)
            #expect(zone.offset(atUnixSeconds: 2_200_000_000) == 7200)
            #expect(zone.offset(atUnixSeconds: 2_209_999_999) == 7200)
            // On and after the last transition (2040-01-12): the footer.
            #expect(zone.offset(atUnixSeconds: 2_210_000_000) == 3600)
            #expect(zone.offset(atUnixSeconds: utc(2040, 7, 1)) == 7200)
            #expect(zone.offset(atUnixSeconds: utc(2040, 12, 1)) == 3600)
        }
    }

    @Test("no transitions: the footer for every instant; an empty footer: time type 0")
    func noTransitions() throws {
        var file = TZifWriter()
        file.types = [.init(offset: 10_800)]
        file.designations = "+03\0"
        file.footer = "<+03>-3"
        #expect(try ZoneRules(name: "Etc/GMT-3", tzif: file.bytes()).offset(atUnixSeconds: -9_000_000_000) == 10_800)
        file.footer = "EST5EDT,M3.2.0,M11.1.0"
        let rules = try ZoneRules(name: "Test/Footer", tzif: file.bytes())
        #expect(rules.offset(atUnixSeconds: utc(1950, 1, 15)) == -18_000)
        #expect(rules.offset(atUnixSeconds: utc(1950, 7, 15)) == -14_400)
        file.footer = ""
        #expect(try ZoneRules(name: "Test/Empty", tzif: file.bytes()).offset(atUnixSeconds: utc(2027, 7, 1)) == 10_800)
    }
}
