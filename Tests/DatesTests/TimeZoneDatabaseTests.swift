import Dates
import Foundation
import Testing

/// Names to files: what is refused before any read, what a directory holds, the built-in UTC.
@Suite("Time zone database")
struct TimeZoneDatabaseTests {
    @Test("malformed names are refused without a read")
    func names() {
        for name in [
            "", "/etc/passwd", "../etc/passwd", "Europe/../../etc/passwd", "Europe//Berlin", "Europe/", "Europe/Berlin/", "Europe/./Berlin",
            "Europe/Berlin ", "Europe\\Berlin", "Europe/Berlín", String(repeating: "A", count: 65), "zone.tab", "Europe/Berlin\0",
        ] {
            #expect(!TimeZoneDatabase.isWellFormed(name), "\(name)")
            #expect(TimeZoneDatabase.shared.zone(named: name) == nil, "\(name)")
        }
        for name in ["Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT-3", "Etc/GMT+10", "UTC", String(repeating: "A", count: 64)] {
            #expect(TimeZoneDatabase.isWellFormed(name), "\(name)")
        }
    }

    @Test("what is not a zone file: a directory, a missing file, a file that is not TZif, a right/ zone")
    func notZones() throws {
        let database = TimeZoneDatabase(directory: "/usr/share/zoneinfo")
        #expect(database.zone(named: "Europe") == nil)
        #expect(database.zone(named: "Mars/Olympus_Mons") == nil)
        #expect(database.zone(named: "Mars/Olympus_Mons") == nil)  // cached, still nil
        #expect(database.zone(named: "leapseconds") == nil)  // tzdata's text table of leap seconds
        if FileManager.default.fileExists(atPath: "/usr/share/zoneinfo/right/Europe/Berlin") {
            #expect(database.zone(named: "right/Europe/Berlin") == nil)
        }
        #expect(database.zone(named: "Europe/Berlin")?.name == "Europe/Berlin")
        #expect(database.zone(named: "Europe/Berlin") == database.zone(named: "Europe/Berlin"))
    }

    @Test("UTC and Etc/UTC are built in: they resolve without the directory, nothing else does")
    func builtIn() throws {
        let empty = TimeZoneDatabase(directory: "/nonexistent-\(UInt64.random(in: 0...UInt64.max))")
        #expect(empty.zone(named: "UTC") == ZoneRules.utc)
        #expect(empty.zone(named: "Etc/UTC")?.offset(atUnixSeconds: 1_800_000_000) == 0)
        #expect(empty.zone(named: "Etc/UTC")?.name == "Etc/UTC")
        #expect(empty.zone(named: "Europe/Berlin") == nil)
    }

    @Test("a directory of our own: files written there are read, a corrupt one is not a zone")
    func ownDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tzdir-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("Test"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(TZifParsingTests.handWrittenV1).write(to: directory.appendingPathComponent("Test/One"))
        try Data(TZifParsingTests.handWrittenV1.prefix(50)).write(to: directory.appendingPathComponent("Test/Cut"))
        let database = TimeZoneDatabase(directory: directory.path)
        #expect(database.zone(named: "Test/One")?.offset(atUnixSeconds: 0) == 7200)
        #expect(database.zone(named: "Test/Cut") == nil)
        #expect(database.zone(named: "Europe/Berlin") == nil)
    }

    @Test("many threads looking up at once get the same zones")
    func concurrent() async throws {
        let database = TimeZoneDatabase(directory: "/usr/share/zoneinfo")
        let names = ["Europe/Berlin", "America/New_York", "Asia/Kathmandu", "No/Such_Zone", "UTC"]
        let results = await withTaskGroup(of: [ZoneRules?].self) { group in
            for _ in 0..<8 { group.addTask { names.map { database.zone(named: $0) } } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for r in results {
            #expect(r == results[0])
            #expect(r.map { $0?.name } == ["Europe/Berlin", "America/New_York", "Asia/Kathmandu", nil, "UTC"])
        }
    }
}
