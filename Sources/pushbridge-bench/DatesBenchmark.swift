import Dates

/// Time zone lookups as the quiet-hours rule makes them per push: a zone's offset at an instant,
/// and whether an instant is in a user's quiet window (Europe/Berlin, read from the OS tzdata).
enum DatesBenchmark {
    /// `lookups` calls per round, median of `rounds` after a warm-up round.
    static func run(lookups: Int, rounds: Int = 5) throws -> [(name: String, value: Double)] {
        guard let berlin = TimeZoneDatabase.shared.zone(named: "Europe/Berlin") else {
            throw BenchError("Europe/Berlin is not in \(TimeZoneDatabase.shared.directory) (install tzdata)")
        }
        let window = QuietWindow(from: ClockTime("22:00")!, to: ClockTime("07:30")!)!
        // 1,024 instants 7 h 7 min 7 s apart (~10 months: day and night, both DST changes) from
        // 2026-01-01, read from the file's transitions; the same from 2040-01-01, past its last
        // transition (2037), from the footer's rule.
        let transitions = (0..<1024).map { 1_767_225_600 + Int64($0) * 25_627 }
        let footer = (0..<1024).map { 2_208_988_800 + Int64($0) * 25_627 }
        func measure(_ instants: [Int64], _ body: (Int64) -> Int) -> Double {
            var times: [Double] = []
            for round in 0...rounds {
                var sink = 0
                let start = ContinuousClock.now
                for i in 0..<lookups { sink &+= body(instants[i & 1023]) }
                let seconds = KafkaBenchmark.seconds(ContinuousClock.now - start)
                precondition(sink != Int.min)
                if round > 0 || rounds == 0 { times.append(seconds * 1e9 / Double(lookups)) }
            }
            return times.sorted()[times.count / 2]
        }
        return [
            ("zone_offset_ns", measure(transitions) { Int(berlin.offset(atUnixSeconds: $0)) }),
            ("zone_offset_footer_ns", measure(footer) { Int(berlin.offset(atUnixSeconds: $0)) }),
            ("quiet_window_contains_ns", measure(transitions) { window.contains(unixSeconds: $0, in: berlin) ? 1 : 0 }),
            ("quiet_window_contains_footer_ns", measure(footer) { window.contains(unixSeconds: $0, in: berlin) ? 1 : 0 }),
            ("zone_cached_lookup_ns", measure(transitions) { TimeZoneDatabase.shared.zone(named: "Europe/Berlin")!.name.utf8.count + Int($0 & 1) }),
        ]
    }
}
