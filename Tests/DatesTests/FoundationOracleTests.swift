import Dates
import Foundation
import TestSupport
import Testing

/// Our offsets against Foundation's `TimeZone(identifier:).secondsFromGMT(for:)`, which on Linux
/// (swift-corelibs-foundation over FoundationInternationalization) answers from ICU's own copy
/// of the tz database (2025b in Swift 6.3.1's, as Debian's tzdata here): the same rules
/// compiled by different code.
///
/// Where they differ, and why it is not ours to fix (found by this test, tzdata 2025b-0+deb12u2):
/// Debian builds its tzdata with `PACKRATDATA=backzone` (its changelog, since 2022g-3;
/// tzdata.zi's `# ddeps backzone`): zones that the main data makes links keep their own
/// history before 1970 (Africa/Accra is not Africa/Abidjan, Africa/Addis_Ababa not
/// Africa/Nairobi, about 100 of them), and `WET` and `EET` stay the old zones with EU rules,
/// where since tzdata 2024b (and in ICU) they are links to Europe/Lisbon and Europe/Athens
/// (different in 1977–1996). ICU uses the main data. So every zone is compared from 1970 on
/// except those two, and only zone1970.tab's zones (canonical in the main data too) before.
@Suite("Time zones against Foundation (ICU)")
struct FoundationOracleTests {
    /// Every zone (not link) tzdata.zi names: `Z name …` lines.
    static func zoneNames() throws -> [String] {
        let text = try String(contentsOfFile: "/usr/share/zoneinfo/tzdata.zi", encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            return fields.count >= 2 && fields[0] == "Z" ? String(fields[1]) : nil
        }
    }

    /// The zones zone1970.tab lists: canonical in the main data, the same with or without backzone.
    static func canonicalNames() throws -> Set<String> {
        let text = try String(contentsOfFile: "/usr/share/zoneinfo/zone1970.tab", encoding: .utf8)
        return Set(
            text.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { $0.split(separator: "\t").dropFirst(2).first.map(String.init) })
    }

    @Test("every zone's offsets from 1900 to 2100 (seeded samples, and each side of each transition)")
    func offsets() async throws {
        let names = try Self.zoneNames()
        let canonical = try Self.canonicalNames()
        #expect(names.count > 300)
        #expect(canonical.count > 300 && canonical.isSubset(of: Set(names)))
        // Over 100,000 comparisons: on a thread of its own, not on the test runner's cooperative
        // threads, which other suites' async tests need meanwhile.
        let (compared, disagreements) = try await offPool { Self.compare(names, canonical: canonical) }
        #expect(compared > 100_000)
        #expect(disagreements.isEmpty, "\(disagreements.count) of \(compared): \(disagreements.prefix(40).joined(separator: "\n"))")
    }

    /// Our offsets against Foundation's at seeded instants and each side of each transition:
    /// how many were compared, and each disagreement (or zone one side does not know).
    static func compare(_ names: [String], canonical: Set<String>) -> (Int, [String]) {
        let database = TimeZoneDatabase(directory: "/usr/share/zoneinfo")
        var rng = SplitMix64(seed: 8536)
        var compared = 0
        var disagreements: [String] = []
        for name in names where !["WET", "EET"].contains(name) {
            guard let zone = database.zone(named: name) else {
                disagreements.append("pushbridge does not read \(name)")
                continue
            }
            guard let oracle = TimeZone(identifier: name) else {
                disagreements.append("Foundation does not know \(name)")
                continue
            }
            let from = canonical.contains(name) ? utc(1900, 1, 1) : utc(1970, 1, 1)
            var instants = (0..<200).map { _ in Int64.random(in: from..<utc(2100, 1, 1), using: &rng) }
            var t = from
            while true {
                let p = zone.period(at: t)
                guard p.end < utc(2100, 1, 1) else { break }
                instants += [p.end - 1, p.end]
                t = p.end
            }
            for t in instants {
                let ours = Int(zone.offset(atUnixSeconds: t))
                let theirs = oracle.secondsFromGMT(for: Date(timeIntervalSince1970: Double(t)))
                compared += 1
                if ours != theirs {
                    disagreements.append("\(name) at \(t) (\(RFC3339.format(milliseconds: t * 1000))): ours \(ours), Foundation \(theirs)")
                }
            }
        }
        return (compared, disagreements)
    }
}
