/// Which lines of a stream of log lines to write, so that a failure that repeats reads as one
/// incident: its first line when it starts, a count every ``period`` while it lasts, and one line
/// when it ends (none like it for two periods: a failure that recurs about once a period, as
/// librdkafka's reconnects back off to, is still one incident). Each of them says it with the
/// first line's text, so the three read alike. Pure: kinds, lines and instants in, summaries out; ``LogSummary`` keeps one
/// under its lock and ticks it.
///
/// A broker that is down makes librdkafka fail a connection attempt every 50 ms to 10 s, each a
/// line, and every commit and every record write fails with it: thousands of lines a minute
/// that say one thing. What an operator needs is the change (the first line), that it goes on
/// (a count per period) and when it stopped (no line like it for two periods).
struct RepeatedLines<Line: Sendable>: Sendable {
    /// At most one line of a kind per this long while it repeats; a kind unseen for two has ended.
    let period: Duration
    private var quiet: Duration { period * 2 }
    /// Kinds remembered at most: beyond it, the one seen longest ago is ended early.
    static var capacity: Int { 256 }

    /// A kind's incident: its lines since the first.
    private struct Run: Sendable {
        var line: Line
        let started: ContinuousClock.Instant
        var lastSeen: ContinuousClock.Instant
        /// When a line of it was last written.
        var reported: ContinuousClock.Instant
        /// Lines since the last one written, and in all (the first included).
        var sinceReport = 0
        var total = 1
    }

    private var runs: [String: Run] = [:]

    init(period: Duration) {
        self.period = period
    }

    /// What to write.
    enum Summary {
        /// The first line of a kind: write it as it is.
        case started(Line)
        /// The kind goes on: `count` lines like `line` (its first) since the last one written,
        /// `total` since it started, `lasting` from the first to the latest.
        case continuing(Line, count: Int, total: Int, lasting: Duration)
        /// No line of the kind for two periods: it repeated `total` times over `lasted` (from the
        /// first line to the last). A line that never repeated ends silently.
        case ended(Line, total: Int, lasted: Duration)
    }

    /// A line of `kind` at `now`: what to write for it (nothing while it repeats within a period).
    mutating func admit(_ kind: String, _ line: Line, at now: ContinuousClock.Instant) -> [Summary] {
        guard var run = runs[kind] else { return start(kind, line, at: now) }
        if now - run.lastSeen >= quiet {  // it had ended, unnoticed by a tick: this is a new one
            runs[kind] = nil
            return Self.end(run).map { [$0] + start(kind, line, at: now) } ?? start(kind, line, at: now)
        }
        run.lastSeen = now
        run.sinceReport += 1
        run.total += 1
        defer { runs[kind] = run }
        return report(&run, at: now).map { [$0] } ?? []
    }

    /// What is due at `now` without a new line: counts of kinds that go on, and the ends of
    /// kinds unseen for two periods. Oldest incidents first.
    mutating func tick(at now: ContinuousClock.Instant) -> [Summary] {
        var summaries: [(ContinuousClock.Instant, Summary)] = []
        for (kind, var run) in runs {
            if now - run.lastSeen >= quiet {
                runs[kind] = nil
                if let end = Self.end(run) { summaries.append((run.started, end)) }
            } else if let report = report(&run, at: now) {
                runs[kind] = run
                summaries.append((run.started, report))
            }
        }
        return summaries.sorted { $0.0 < $1.0 }.map(\.1)
    }

    private mutating func start(_ kind: String, _ line: Line, at now: ContinuousClock.Instant) -> [Summary] {
        var summaries: [Summary] = []
        if runs.count >= Self.capacity, let oldest = runs.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
            runs[oldest.key] = nil
            if let end = Self.end(oldest.value) { summaries.append(end) }
        }
        runs[kind] = Run(line: line, started: now, lastSeen: now, reported: now)
        return summaries + [.started(line)]
    }

    private func report(_ run: inout Run, at now: ContinuousClock.Instant) -> Summary? {
        guard run.sinceReport > 0, now - run.reported >= period else { return nil }
        defer { (run.reported, run.sinceReport) = (now, 0) }
        return .continuing(run.line, count: run.sinceReport, total: run.total, lasting: run.lastSeen - run.started)
    }

    private static func end(_ run: Run) -> Summary? {
        run.total > 1 ? .ended(run.line, total: run.total, lasted: run.lastSeen - run.started) : nil
    }
}
