import Dates
import TestSupport
import Testing

/// Files that are not valid TZif are errors that say what is wrong, never a trap.
@Suite("TZif malformed files")
struct TZifMalformedTests {
    static var valid: TZifWriter {
        var file = TZifWriter()
        file.types = [.init(offset: 3600), .init(offset: 7200, isdst: 1, designation: 4)]
        file.designations = "CET\0CEST\0"
        file.transitions = [(1_000_000, 1), (2_000_000, 0)]
        file.footer = "CET-1CEST,M3.5.0,M10.5.0/3"
        return file
    }

    func error(_ bytes: [UInt8]) -> ZoneRulesError? {
        do {
            _ = try ZoneRules(name: "Bad", tzif: bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test("each cut-short prefix of a valid version 2 file throws; the whole file parses")
    func truncated() throws {
        let bytes = Self.valid.bytes()
        #expect(error(bytes) == nil)
        for length in 0..<bytes.count {
            #expect(error(Array(bytes[0..<length])) != nil, "\(length) of \(bytes.count) bytes")
        }
        var v1 = Self.valid
        v1.version = 0
        let v1Bytes = v1.bytes()
        #expect(error(v1Bytes) == nil)
        for length in 0..<v1Bytes.count {
            #expect(error(Array(v1Bytes[0..<length])) != nil, "version 1: \(length) of \(v1Bytes.count) bytes")
        }
    }

    @Test("what the RFC forbids, each with what is wrong")
    func forbidden() {
        func mutated(_ change: (inout TZifWriter) -> Void) -> [UInt8] {
            var file = Self.valid
            change(&file)
            return file.bytes()
        }
        var badMagic = Self.valid.bytes()
        badMagic[0] = UInt8(ascii: "X")
        var badVersion = Self.valid.bytes()
        badVersion[4] = UInt8(ascii: "9")
        let cases: [(String, [UInt8])] = [
            ("no \"TZif\" magic", badMagic),
            ("unknown version", badVersion),
            ("typecnt is zero", mutated { $0.types = [] }),
            ("charcnt is zero", mutated { $0.designations = "" }),
            ("not strictly ascending", mutated { $0.transitions = [(2_000_000, 1), (1_000_000, 0)] }),
            ("not strictly ascending", mutated { $0.transitions = [(1_000_000, 1), (1_000_000, 0)] }),
            ("a type that does not exist", mutated { $0.transitions = [(1_000_000, 2)] }),
            ("isdst is 2", mutated { $0.types[1].isdst = 2 }),
            ("a designation index past", mutated { $0.types[1].designation = 40 }),
            ("outside −24:59:59…25:59:59", mutated { $0.types[0].offset = 93_600 }),
            ("outside −24:59:59…25:59:59", mutated { $0.types[0].offset = Int32.min }),
            ("leap-second records", mutated { $0.leapRecords = 2 }),
            ("no footer", mutated { $0.footer = nil }),
            ("no closing newline", mutated { $0.footer = nil } + Array("\nCET-1".utf8)),
            ("POSIX TZ string", mutated { $0.footer = "CET-1CEST" }),
            ("not printable ASCII", mutated { $0.footer = "CET\u{7}-1" }),
        ]
        for (expected, bytes) in cases {
            let failure = error(bytes)
            #expect(failure?.description.contains(expected) == true, "\(expected): \(failure?.description ?? "parsed")")
        }
    }

    @Test("counts near 2^32 are a length error, not an overflow or a huge allocation")
    func hugeCounts() {
        var bytes = Self.valid.bytes()
        for offset in [32, 40] {  // timecnt and charcnt (typecnt must equal the indicator counts)
            bytes.replaceSubrange(offset..<offset + 4, with: [0xFF, 0xFF, 0xFF, 0xFF])
        }
        #expect(error(bytes)?.description.contains("ends inside") == true)
    }

    @Test("random byte changes and random files: errors or zones, never a trap (seeded)")
    func fuzz() {
        var rng = SplitMix64(seed: 55)
        let valid = Self.valid.bytes()
        var parsed = 0
        for _ in 0..<3000 {
            var bytes = valid
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            if error(bytes) == nil {
                parsed += 1
                // A zone that parsed answers every lookup.
                guard let zone = try? ZoneRules(name: "Fuzz", tzif: bytes) else { continue }
                for t in [Int64.min, -1, 0, 1_500_000, Int64.max] { _ = zone.offset(atUnixSeconds: t) }
                for day in [Int64.min, -1, 0, 20_000, Int64.max] { _ = zone.instant(localDay: day, secondOfDay: 3600) }
            }
        }
        #expect(parsed > 0)  // changes inside the transition times or designations still parse
        for _ in 0..<1000 {
            let bytes = Array("TZif2".utf8) + (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            _ = error(bytes)
        }
    }
}
